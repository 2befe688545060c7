// Small helpers for writing the dashboard's HTML by hand: escaping, number
// formatting, and the one stylesheet every page inlines (the site works
// from a file:// URL with no network, so nothing is linked).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace tc::bench::html {

// Text and attribute values: & < > " ' escaped.
std::string escape(std::string_view s);
// `v` with `digits` after the point and `suffix`, or "–" when absent.
std::string number(const std::optional<double> &v, int digits, const char *suffix = "");
// Bytes as MiB with two decimals, or "–".
std::string mebibytes(const std::optional<int64_t> &bytes);
// A file name part from any string ("ci/cpu" -> "ci-cpu").
std::string slug(std::string_view s);
// <!doctype html> ... <body> with the title and the inline stylesheet.
std::string pageStart(const std::string &title);
std::string pageEnd();

} // namespace tc::bench::html
