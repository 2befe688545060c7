# lit configuration for tc. Tests are grouped by area in sub-folders:
#   RUN: tc-import %s -S | tc-opt --passes=cse -S | FileCheck %s
import os
import shutil
import sys

import lit.formats

config.name = "tc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tcir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tc_obj_root, "test")

# Our tools first, then LLVM's FileCheck/not/count.
path = os.pathsep.join([config.tc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.environment.pop("TC_DEBUG_DIR", None)
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%models", os.path.join(config.tc_src_root, "models")))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%tc_bin", config.tc_tools_dir))
config.substitutions.append(("%tc_build", os.path.dirname(config.tc_tools_dir)))
# A program linked to an instrumented libtcrt must carry the sanitizer runtime.
config.substitutions.append(("%sanitize_flags",
                             "-fsanitize=address,undefined" if config.tc_sanitize else ""))

# A test that hangs fails on its own after 15 minutes (the slowest takes
# about 2) instead of running into CI's time limit with nothing said.
try:
    import psutil  # noqa: F401 (lit's timeout needs it)
    config.maxIndividualTestTime = 900
except ImportError:
    lit_config.warning("psutil is missing: no per-test time limit (utils/install-deps.sh installs it)")

# Long runs (a convergence test) skip the sanitizer build.
if config.tc_sanitize:
    config.available_features.add("sanitize")

# Tests that need (or must not have) a GPU driver.
if os.path.exists("/dev/nvidiactl"):
    config.available_features.add("gpu")
# CUDA code generation (NVRTC) is built when the toolkit was found.
if config.tc_nvrtc:
    config.available_features.add("nvrtc")
