// Regexes of the JSON schema string formats guidance enforces (the decoded string; json_string lexemes add the
// quotes). Lengths are bounded by the formats' own RFC limits so a constrained value always ends.
#pragma once
#include <string>

namespace ogx::genai::guidance {

// date, time, date-time (RFC 3339; February has 28 days: the 29th needs a leap-year check a regex lacks), email
// (RFC 5321 dot-atom local part, at most 64 characters, and a domain), uuid, uri (scheme ":" and RFC 3986
// characters, at most 512), ipv4, hostname. "" for a format not supported.
std::string format_regex(const std::string& format);

}  // namespace ogx::genai::guidance
