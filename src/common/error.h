// ogx::Error — the one exception type of the engine. Messages name the thing that is wrong
// (tensor, node, JSON path, option) so a user can act on them.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace ogx {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {
inline void append(std::ostringstream&) {}
template <typename T, typename... R>
void append(std::ostringstream& os, const T& v, const R&... rest) {
  os << v;
  append(os, rest...);
}
}  // namespace detail

// Builds a message from any streamable parts: throw_error("tensor ", name, " has ", n, " bytes").
template <typename... A>
[[noreturn]] void throw_error(const A&... parts) {
  std::ostringstream os;
  detail::append(os, parts...);
  throw Error(os.str());
}

#define OGX_CHECK(cond, ...)                 \
  do {                                       \
    if (!(cond)) ::ogx::throw_error(__VA_ARGS__); \
  } while (0)

}  // namespace ogx
