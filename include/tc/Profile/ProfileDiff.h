// tc-prof diff: two reports (or traces) side by side: per-run totals and
// per-kernel deltas, largest first, with changes beyond noise flagged.
#pragma once
#include "tc/Profile/ProfileReport.h"
#include <string>

namespace tc {

// A change is beyond noise when |delta| exceeds `minPercent` of the first
// time, twice the larger of the two runs' standard deviations, and 0.5 us.
// format: "text", "json" or "csv".
std::string diffReports(const ProfileReport &a, const ProfileReport &b, const std::string &format,
                        double minPercent = 5);

} // namespace tc
