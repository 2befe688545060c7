// Inside lib/Profile: the report as an llvm::json value, for embedding it
// in a trace's "otherData".
#pragma once
#include "tc/Profile/ProfileReport.h"
#include <llvm/Support/JSON.h>

namespace tc {
llvm::json::Value reportJsonValue(const ProfileReport &r);
} // namespace tc
