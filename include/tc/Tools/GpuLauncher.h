// tc-run --gpus N: N processes of the tool, one GPU each, as a launcher
// starts them (tc/Runtime/DeviceRanks.h: RANK, WORLD_SIZE, LOCAL_RANK and
// TC_NCCL_ID, a unique id this process makes and whose bootstrap it serves
// while the ranks run).
#pragma once

namespace tc::tools {

// Runs argv (without its --gpus) as ranks 0..n-1 (n >= 1: tc-run checks). Rank 0 speaks (its stdout
// and stderr are this process's); the others' stdout is dropped and their
// stderr kept, shown prefixed with "rank R: " when they fail. A rank that
// fails gives the others 10 s to end on their own, then stops them (never a
// hang on a collective a dead rank never reaches): rank 0's exit code where
// it ended with an error of its own (its lines are already out), else 1 with
// a line naming the first rank that failed; 0 when all succeed.
int runOnGpus(int n, int argc, char **argv);

} // namespace tc::tools
