#include "genai/guidance/json_formats.h"

namespace ogx::genai::guidance {

namespace {
const std::string kDate =
    "[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))";
const std::string kTime = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,9})?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
const std::string kLabel = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const std::string kHost = kLabel + "(?:\\." + kLabel + "){0,8}";
const std::string kAtom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const std::string kOctet = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
}  // namespace

std::string format_regex(const std::string& f) {
  if (f == "date") return kDate;
  if (f == "time") return kTime;
  if (f == "date-time") return kDate + "[Tt]" + kTime;
  if (f == "email") return kAtom + "{1,30}(?:\\." + kAtom + "{1,16}){0,2}@" + kLabel + "(?:\\." + kLabel + "){1,4}";
  if (f == "uuid") return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
  if (f == "uri")
    return "[A-Za-z][A-Za-z0-9+.-]{0,15}:(?:[A-Za-z0-9._~:/?#@!$&'()*+,;=\\[\\]-]|%[0-9A-Fa-f]{2}){1,512}";
  if (f == "ipv4") return kOctet + "(?:\\." + kOctet + "){3}";
  if (f == "hostname") return kHost;
  return "";
}

}  // namespace ogx::genai::guidance
