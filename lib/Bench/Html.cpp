#include "tc/Bench/Html.h"
#include <cctype>
#include <cmath>
#include <cstdio>

namespace tc::bench::html {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  return out;
}

std::string number(const std::optional<double> &v, int digits, const char *suffix) {
  if (!v || !std::isfinite(*v))
    return "\u2013";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", digits, *v, suffix);
  return buf;
}

std::string mebibytes(const std::optional<int64_t> &bytes) {
  if (!bytes)
    return "\u2013";
  return number(double(*bytes) / (1 << 20), 2);
}

std::string slug(std::string_view s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '-';
  return out;
}

std::string pageStart(const std::string &title) {
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
         escape(title) + R"(</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; white-space: normal; max-width: 9em; } td.l, th.l { text-align: left; }
td.err { text-align: left; white-space: normal; max-width: 40em; font-size: 12px; color: #700; }
tr.fail td { background: #fff4f4; } tr.slow td { background: #fff0c8; }
td.red { background: #ffd6d6; color: #b00; font-weight: 600; }
.regress, tr.regress td { background: #ffd6d6 !important; font-weight: 600; }
.ok { color: #060; } .bad { color: #b00; font-weight: 600; }
.note { color: #555; font-size: 12px; } .charts { display: flex; flex-wrap: wrap; gap: 1em; }
a { color: #0645ad; text-decoration: none; } a:hover { text-decoration: underline; }
code { background: #f4f4f4; padding: 0 3px; }
</style></head><body>
)";
}

std::string pageEnd() { return "</body></html>\n"; }

} // namespace tc::bench::html
