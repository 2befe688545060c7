#include "tc/Analysis/KernelCount.h"
#include "tc/Analysis/MemoryPlan.h"
#include "tc/IR/CompileTimeline.h"
#include "tc/IR/OpTable.h"
#include "tc/IR/Printer.h"
#include "tc/IR/TrainSignature.h"
#include "tc/IR/Verifier.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Support/Error.h"
#include "tc/Tools/Drivers.h"
#include "tc/Tools/ToolCommon.h"
#include "tc/Transforms/ConvGemms.h"
#include "tc/Transforms/GradCheck.h"
#include "tc/Transforms/NumericsCheck.h"
#include "tc/Transforms/Pass.h"
#include "tc/Transforms/ShapeInference.h"
#include <iostream>
#include <optional>
#include <sstream>

namespace tc::tools {

namespace {

void listPasses(std::ostream &os) {
  os << "Available passes:\n";
  for (const PassInfo &p : allPasses()) {
    os << "  " << p.name << "  - " << p.summary << "\n";
    for (const PassOptionSpec &o : p.options)
      os << "      " << o.name << "=" << o.defaultValue << "  " << o.doc << "\n";
  }
  os << "Pipelines:\n";
  for (int level = 0; level <= 3; ++level)
    os << "  -O" << level << " = " << pipelineForLevel(level).spelling() << "\n";
}

std::string escapePipes(const std::string &s) {
  std::string r;
  for (char c : s)
    r += c == '|' ? std::string("\\|") : std::string(1, c);
  return r;
}

void listOpsMarkdown(std::ostream &os) {
  os << "# tc IR reference\n\n"
     << "Generated from include/tc/IR/Ops.def by `tc-opt --list-ops --format=markdown`;\n"
     << "a lit test fails when this file is stale.\n\n"
     << "Types: `f32[N,(+ past 1),64]`. A dim is a size, a symbol (`N`, bound by the\n"
     << "inputs), `?` (known only at run time: NonZero's count) or an expression of\n"
     << "symbols in its one canonical text (include/tc/IR/DimExpr.h): `(* 2 N)`,\n"
     << "`(+ N S -1)`, `(/ (* 3 N) 2)` (an exact quotient), `(max a b)`, which shape\n"
     << "inference derives (Reshape's -1, Concat along a symbolic axis, sizes\n"
     << "computed from Shape).\n\n"
     << "Operand `X?` is optional (`none` when absent); `X...` takes one or more.\n"
     << "Fusion categories: pointwise, reduction, library (matmul/conv), shape, opaque.\n"
     << "Precision (what `mixed-precision` does): low (runs in f16/bf16), f32 (stays f32),\n"
     << "follow (runs in its data operand's type), keep (left alone).\n"
     << "Library: the tuned library call that may take a group the op anchors\n"
     << "(contraction, reduce, pool; none: generated kernels only).\n"
     << "FLOPs: how tc-prof counts the op's work (include/tc/IR/OpTable.h, FlopRule).\n\n"
     << "| op | category | precision | library | FLOPs | operands | results | summary |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (const OpInfo &op : allOps()) {
    os << "| " << (op.attrs.empty() ? op.name : "[" + op.name + "](#" + op.name + ")") << " | "
       << fusionCategoryName(op.category) << " | " << precisionClassName(op.precision) << " | "
       << libraryClassName(op.library) << " | " << flopRuleName(op.flops) << " | ";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os << (i ? ", " : "") << op.operands[i].name << (op.operands[i].optional ? "?" : "")
         << (op.operands[i].variadic ? "..." : "");
    os << " | " << (op.numResults < 0 ? "1+" : std::to_string(op.numResults)) << " | "
       << escapePipes(op.summary) << " |\n";
  }
  for (const OpInfo &op : allOps()) {
    if (op.attrs.empty())
      continue;
    os << "\n## " << op.name << "\n\n"
       << op.summary << "\n\n| attribute | kind | default | meaning |\n"
       << "|---|---|---|---|\n";
    for (const AttrSpec &a : op.attrs)
      os << "| " << a.name << " | " << attrKindName(a.kind) << " | "
         << (a.defaultValue ? "`" + a.defaultValue->str() + "`" : std::string("required")) << " | "
         << escapePipes(a.doc) << " |\n";
  }
}

void listOps(std::ostream &os) {
  for (const OpInfo &op : allOps()) {
    os << op.name << "  [" << fusionCategoryName(op.category) << "]  (";
    for (size_t i = 0; i < op.operands.size(); ++i)
      os << (i ? ", " : "") << op.operands[i].name << (op.operands[i].optional ? "?" : "")
         << (op.operands[i].variadic ? "..." : "");
    os << ") -> " << (op.numResults < 0 ? "1+" : std::to_string(op.numResults)) << "  "
       << op.summary << "\n    precision " << precisionClassName(op.precision) << ", library "
       << libraryClassName(op.library) << ", flops " << flopRuleName(op.flops) << "\n";
    for (const AttrSpec &a : op.attrs)
      os << "    " << a.name << ": " << attrKindName(a.kind)
         << (a.defaultValue ? " = " + a.defaultValue->str() : std::string(" (required)")) << "  "
         << a.doc << "\n";
  }
}

} // namespace

int tcOptMain(int argc, char **argv) {
  return runTool("tc-opt", [&] {
    CommonOptions common;
    std::string passes;
    int level = -1, attention = -1;
    PassManagerOptions pm;
    bool list = false, ops = false, split = false, fuse = false, stats = false;
    bool memoryPlan = false, memoryPlanBuffers = false;
    std::vector<std::string> dimFlags;
    std::string format = "text";
    bool verifyNumerics = false;
    std::string precision = "fp32", target = "any", convGemm, mergeGemms = "on", remat = "on",
                shadows = "on", halfGrads = "on", nhwcConvT = "on", attentionGemms = "on";
    bool lowPrecisionIO = false;
    std::string precisionPolicy = "fast";
    InputSources numericInputs;
    NumericsCheckOptions numerics;
    bool checkGrads = false, train = false, eval = false;
    int64_t tensorParallel = 1, dataParallel = 1, bucketMb = 25;
    std::string lossSpec = "cross-entropy", optimizerSpec = "adamw", trainable = ".*", freeze;
    std::string lossScale = "dynamic";
    GradCheckOptions gradCheck;
    // Each target's passes as its pipeline spells them (Targets.def).
    std::string targetHelp = "add the passes a code generation target wants before fuse";
    const char *sep = " (";
    for (const Target &t : targets())
      if (t.optPipeline) {
        // ", " so that the help wraps between passes.
        for (char c : sep + std::string(t.name) + ": " + t.optPipeline().spelling())
          targetHelp += c == ',' ? std::string(", ") : std::string(1, c);
        sep = "; ";
      }
    targetHelp += *sep == ';' ? ")" : "";
    po::options_description opts("tc-opt options");
    opts.add_options()("passes", po::value(&passes)->value_name("P1,P2{k=v}"),
                       "run these passes in order")(
        ",O", po::value(&level)->value_name("N"),
        "run the -O0..-O3 pipeline (-O3: -O2 + attention)")("list-passes", po::bool_switch(&list),
                                                            "list the registered passes and exit")(
        "list-ops", po::bool_switch(&ops), "list the ops of the IR and exit")(
        "format", po::value(&format)->value_name("text|markdown"),
        "format of --list-ops")("print-ir-after-all", po::bool_switch(&pm.printAfterAll),
                                "print the IR after every pass to stderr")(
        "print-ir-after", po::value(&pm.printAfter)->composing()->value_name("PASS"),
        "print the IR after each run of PASS to stderr")(
        "time-passes", po::bool_switch(&pm.timePasses), "print time per pass to stderr")(
        "verify-each", po::bool_switch(&pm.verifyEach),
        "verify the IR after every pass that changed it")("fuse", po::bool_switch(&fuse),
                                                          "run the fusing pipeline (-O2)")(
        "attention-fusion", po::value(&attention)->value_name("0|1"),
        "with -O2/-O3: run attention-fusion or not (default: -O3 1, -O2 1 with --target=cuda at "
        "fp16/bf16, else 0)")("dim", po::value(&dimFlags)->composing()->value_name("NAME=N"),
                              "specialize symbolic dim NAME to N before the pipeline")(
        "stats", po::bool_switch(&stats),
        "print op and kernel counts before and after the pipeline to stderr")(
        "print-memory-plan", po::bool_switch(&memoryPlan),
        "print the memory plan of the result (predicted vs naive peak) to stderr")(
        "print-memory-plan-buffers", po::bool_switch(&memoryPlanBuffers),
        "the same with one line per buffer (offset, size, lifetime, view or in-place)")(
        "split-input-file", po::bool_switch(&split),
        "process each `// -----`-separated chunk of the input on its own; text output")(
        "target", po::value(&target)->value_name("any|" + targetNames("|")), targetHelp.c_str())(
        "rematerialize", po::value(&remat)->value_name("on|off|keep-gemm-operands"),
        "a train step's backward recomputes cheap saved forward values (rematerialize; default "
        "on; off for an A/B of memory and time; keep-gemm-operands: but not those only GEMMs "
        "and convs read)")(
        "weight-shadows", po::value(&shadows)->value_name("on|off"),
        "--train with --precision fp16/bf16: each weight's half copy is state the optimizer "
        "writes, not a cast each forward (weight-shadows; default on; off for an A/B)")(
        "half-gradients", po::value(&halfGrads)->value_name("on|off"),
        "--train with --precision fp16/bf16: a weight gradient stays the half GEMM's result, "
        "widened by the optimizer's kernels that read it (rematerialize's half-gradients; "
        "default on; off for an A/B)")(
        "attention-grad-gemms", po::value(&attentionGemms)->value_name("on|off|backward"),
        "with --target=cuda: an f32 attention backward and a train step's f32 forward with few "
        "enough scores as batched GEMMs (attention-grad-gemms; default on; off keeps the f32 "
        "kernels, backward the forward's: A/Bs)")(
        "nhwc-conv-transpose", po::value(&nhwcConvT)->value_name("on|off"),
        "with --target=cuda: a conv's backward data pass in NHWC too (channels-last's "
        "conv-transpose; default on; off keeps it NCHW: an A/B)")(
        "merge-gemms", po::value(&mergeGemms)->value_name("on|off|train"),
        "on a GPU target at -O2/-O3: sibling GEMMs (one input, constant weights) as one "
        "(merge-gemms; default on: in a train step also its weight arguments' q, k, v "
        "GEMMs of equal widths, attention's heads, before autodiff; train: every sibling "
        "set of a train step's weight arguments, gate/up and GQA's q, k, v too; off for "
        "an A/B)")(
        "conv-gemm", po::value(&convGemm)->value_name("MODE"),
        "with --target=cuda: which 1x1 convs run as cuBLASLt GEMMs (the conv-gemms pass): "
        "auto (default: its rule; none at fp32), always (every 1x1 NHWC conv with a constant "
        "weight, stride 1, no padding, one group) or never")(
        "data-parallel", po::value(&dataParallel)->value_name("N"),
        "with --train: a step N ranks run on N micro-batches at once, the loss, gradients and "
        "buffers averaged over them before the optimizer (tc-run --train --ranks N, or --gpus "
        "N)")("bucket-mb", po::value(&bucketMb)->value_name("MB"),
              "with --data-parallel: the most MiB of gradients one AllReduce takes (default 25; "
              "0: one AllReduce per gradient)")(
        "tensor-parallel", po::value(&tensorParallel)->value_name("N"),
        "split the model's MLP blocks over N ranks first (tensor-parallel: one program every "
        "rank runs; tc-run --ranks N runs it on the reference executor)")(
        "precision", po::value(&precision)->value_name("fp32|fp16|bf16"),
        "fp16/bf16: run matmul/conv/pointwise in the low type before fusion (adds "
        "mixed-precision,canonicalize,dce before fuse, or at the end)")(
        "low-precision-io", po::bool_switch(&lowPrecisionIO),
        "with --precision fp16|bf16: the model's float inputs and outputs in the low type too "
        "(a model converted to half; a decode step's KV caches stay half between steps)")(
        "precision-policy", po::value(&precisionPolicy)->value_name("fast|autocast"),
        "with --precision fp16|bf16: fast (default) runs pointwise math in the low type; "
        "autocast keeps a pointwise op f32 where an f32 operand is as large as its result, as "
        "PyTorch's autocast promotes (a residual stream that starts f32 stays f32), and a batch "
        "norm's normalization f32 (rounded to half once after it)")(
        "verify-numerics", po::bool_switch(&verifyNumerics),
        "run the reference executor before the pipeline and after every pass that changes the "
        "IR; stop at the first pass whose outputs differ, naming it and the first diverging "
        "value")("inputs", po::value(&numericInputs.dir)->value_name("DIR"),
                 "inputs for --verify-numerics (test_data_set folder; default: random data)")(
        "seed", po::value(&numericInputs.seed)->value_name("S"),
        "seed of --verify-numerics' random inputs (0)")(
        "rtol", po::value(&numerics.rtol)->value_name("R"), "--verify-numerics tolerance (1e-4)")(
        "atol", po::value(&numerics.atol)->value_name("A"), "--verify-numerics tolerance (1e-5)")(
        "dump-failing", po::value(&numerics.dumpFailingDir)->value_name("DIR"),
        "with --verify-numerics: write the IR before and after the failing pass to DIR")(
        "train", po::bool_switch(&train),
        "compile a train step instead of inference: trained parameters as state, a loss, its "
        "backward and an optimizer update before the -O pipeline (docs/training.md)")(
        "eval", po::bool_switch(&eval),
        "compile an eval step for a --train model: the loss (and cross-entropy's top-1 hits) on "
        "the same state (give the same --loss, --trainable, --freeze), batch norms on their "
        "running statistics; tc-run --eval")(
        "loss", po::value(&lossSpec)->value_name("KIND[:k=v,..]"),
        "--train: cross-entropy (default; class-axis, ignore-index, label-smoothing), mse, l1, "
        "bce-with-logits, or output (the model's own scalar output); output=N picks the output")(
        "optimizer", po::value(&optimizerSpec)->value_name("KIND[:k=v,..]"),
        "--train: adamw (default), adam or sgd, with lr, weight-decay, momentum, nesterov, beta1, "
        "beta2, eps, clip-norm, schedule (constant|cosine|linear), warmup, total-steps, min-lr; "
        "none: return the gradients instead of updating")(
        "trainable", po::value(&trainable)->value_name("REGEX"),
        "--train: initializers trained (by ONNX name; default all float ones)")(
        "freeze", po::value(&freeze)->value_name("REGEX"),
        "--train: initializers kept constant (besides those the model's metadata entry tc.frozen "
        "names)")(
        "loss-scale", po::value(&lossScale)->value_name("dynamic|none|N"),
        "--train --precision fp16: the loss scale (default dynamic: PyTorch's GradScaler, on the "
        "device; a step whose gradients overflow is skipped)")(
        "check-gradients", po::bool_switch(&checkGrads),
        "after the pipeline (which differentiates: autodiff), check every gradient it returns "
        "against central finite differences of the loss, both in f64 on the reference executor; "
        "exit 1 on a mismatch (inputs: --inputs, else random; --seed)")(
        "grad-rtol", po::value(&gradCheck.rtol)->value_name("R"),
        "--check-gradients tolerance (1e-5)")("grad-atol",
                                              po::value(&gradCheck.atol)->value_name("A"),
                                              "--check-gradients tolerance (1e-7)")(
        "grad-samples", po::value(&gradCheck.samples)->value_name("N"),
        "--check-gradients: elements checked per gradient, plus the largest (8)");
    po::variables_map vm;
    if (!parseCommandLine("tc-opt", "[options] <input.tcbc | input.tcir | ->", argc, argv, opts,
                          common, vm))
      return 0;
    if (list || ops) {
      if (format != "text" && format != "markdown")
        fail("unknown --format '", format, "' (text or markdown)");
      if (list)
        listPasses(std::cout);
      else
        format == "markdown" ? listOpsMarkdown(std::cout) : listOps(std::cout);
      return 0;
    }
    if (int(!passes.empty()) + int(level >= 0) + int(fuse) > 1)
      fail("give one of --passes, -O and --fuse");
    if (fuse)
      level = 2;
    std::map<std::string, int64_t> dims = parseDimFlags(dimFlags);
    if (!verifyNumerics && !checkGrads && !numericInputs.dir.empty())
      fail("--inputs goes with --verify-numerics or --check-gradients");
    if (!verifyNumerics && !numerics.dumpFailingDir.empty())
      fail("--dump-failing goes with --verify-numerics");
    if (!(numerics.rtol >= 0) || !(numerics.atol >= 0))
      fail("--rtol and --atol must be non-negative");
    numericInputs.random = true; // for inputs the folder does not give
    numericInputs.dims = dims;
    if (level > 3)
      fail("-O", level, " does not exist (use -O0 to -O3)");
    for (const std::string &p : pm.printAfter)
      if (!lookupPass(p))
        fail("--print-ir-after: unknown pass '", p, "'");
    if (attention != -1 && (attention < 0 || attention > 1))
      fail("--attention-fusion takes 0 or 1, not ", attention);
    if (attention != -1 && (!passes.empty() || (level >= 0 && level < 2)))
      fail("--attention-fusion goes with -O2, -O3 or --fuse");
    // -O2's attention-fusion: the flag, else the rule for the target's kind.
    std::optional<bool> attend;
    if (attention >= 0)
      attend = attention == 1;
    else if (const Target *t = findTarget(target); t && attentionFusionAtO2(t->gpu, precision))
      attend = true;
    Pipeline pipeline =
        passes.empty() ? pipelineForLevel(level < 0 ? 2 : level, attend) : parsePipeline(passes);
    // Target- and precision-driven passes go right before lower-quantize
    // and fusion (preFusionAnchor), so that fusion absorbs the transposes
    // and casts they insert; with neither pass, at the end of the pipeline.
    if (mergeGemms != "on" && mergeGemms != "off" && mergeGemms != "train")
      fail("--merge-gemms takes on, off or train, not '", mergeGemms, "'");
    if (remat != "on" && remat != "off" && remat != "keep-gemm-operands")
      fail("--rematerialize takes on, off or keep-gemm-operands, not '", remat, "'");
    if (remat == "off")
      pipeline.setOption(PassId::Rematerialize, "max-chain", "0");
    if (remat == "keep-gemm-operands")
      pipeline.setOption(PassId::Rematerialize, "keep-library-operands", "1");
    if (shadows != "on" && shadows != "off")
      fail("--weight-shadows takes on or off, not '", shadows, "'");
    if (halfGrads != "on" && halfGrads != "off")
      fail("--half-gradients takes on or off, not '", halfGrads, "'");
    if (halfGrads == "off")
      pipeline.setOption(PassId::Rematerialize, "half-gradients", "0");
    if (target != "any") { // what the target wants before fusion (Targets.def)
      const Target *t = findTarget(target);
      if (!t)
        fail("unknown --target '", target, "' (", targetNames(", "), " or any)");
      // On a GPU, sibling GEMMs become one (fewer launches, wider N at a
      // small batch) before attention-fusion: the packed qkv it leaves is
      // what attention-layouts reads in place (MergeGemms.cpp).
      if (t->gpu && passes.empty() && (level < 0 || level >= 2) && mergeGemms != "off") {
        bool attend = std::any_of(pipeline.begin(), pipeline.end(), [](const PassInvocation &p) {
          return p.is(PassId::AttentionFusion);
        });
        pipeline.insertBefore(attend ? PassId::AttentionFusion : pipeline.preFusionAnchor(),
                              Pipeline{PassId::MergeGemms});
      }
      if (t->optPipeline)
        pipeline.insertBefore(pipeline.preFusionAnchor(), t->optPipeline());
    }
    if (attentionGemms != "on" && attentionGemms != "off" && attentionGemms != "backward")
      fail("--attention-grad-gemms takes on, off or backward, not '", attentionGemms, "'");
    if (attentionGemms != "on" &&
        (attentionGemms == "off"
             ? pipeline.setOption(PassId::AttentionGradGemms, "max-scores", "0")
             : pipeline.setOption(PassId::AttentionGradGemms, "forward", "0")) == 0)
      fail("--attention-grad-gemms goes with --target=cuda or a --passes list that runs "
           "attention-grad-gemms");
    if (nhwcConvT != "on" && nhwcConvT != "off")
      fail("--nhwc-conv-transpose takes on or off, not '", nhwcConvT, "'");
    // On by default: an error only when asked for where channels-last does not run.
    if (nhwcConvT == "on" && pipeline.setOption(PassId::ChannelsLast, "conv-transpose", "1") == 0 &&
        vm.count("nhwc-conv-transpose"))
      fail("--nhwc-conv-transpose goes with --target=cuda or a --passes list that runs "
           "channels-last");
    if (!convGemm.empty()) {
      if (!parseConvGemmMode(convGemm))
        fail("unknown --conv-gemm '", convGemm, "' (auto, always or never)");
      if (pipeline.setOption(PassId::ConvGemms, "mode", convGemm) == 0)
        fail("--conv-gemm goes with --target=cuda or a --passes list that runs conv-gemms");
    }
    if (tensorParallel < 1 || (tensorParallel > 1 && (train || eval)))
      fail(tensorParallel < 1 ? "--tensor-parallel takes N >= 1"
                              : "--tensor-parallel splits an inference model; training on "
                                "several ranks is not built yet");
    if (tensorParallel > 1) { // on shapes and fused attention ops, before the rest
      Pipeline tp;
      tp.add(PassId::InferShapes)
          .add(PassId::FoldConstants)
          .add(PassId::Canonicalize)
          .add(PassId::AttentionFusion)
          .add(PassInvocation(PassId::TensorParallel).set("ranks", tensorParallel));
      pipeline = tp.append(pipeline);
    }
    if (dataParallel < 1 || (dataParallel > 1 && !train))
      fail(dataParallel < 1 ? "--data-parallel takes N >= 1" : "--data-parallel goes with --train");
    if (train && eval)
      fail("--train and --eval: one module is a train step or an eval step");
    if (!train && !eval &&
        (vm.count("loss") || vm.count("optimizer") || vm.count("trainable") || vm.count("freeze")))
      fail("--loss, --optimizer, --trainable and --freeze go with --train");
    if (eval && (vm.count("optimizer") || vm.count("loss-scale")))
      fail("--eval updates nothing: no --optimizer or --loss-scale");
    if (!train && vm.count("loss-scale"))
      fail("--loss-scale goes with --train");
    if (train) {
      // Mixed precision covers forward and backward before the optimizer,
      // which updates f32 master weights: not again before fuse.
      std::string low = precision == "fp16" ? "f16" : precision == "bf16" ? "bf16" : "";
      if (vm.count("loss-scale") && precision != "fp16")
        fail("--loss-scale goes with --train --precision fp16");
      Pipeline t =
          trainingPipeline(lossSpec, optimizerSpec == "none" ? "" : optimizerSpec, trainable,
                           freeze, low, precision == "fp16" ? lossScale : "none");
      if (shadows == "off")
        t.setOption(PassId::WeightShadows, "enable", "0");
      if (dataParallel > 1) { // the means before the update (or as the step's results)
        Pipeline dp;
        if (bucketMb < 0)
          fail("--bucket-mb takes MB >= 0");
        dp.add(PassInvocation(PassId::DataParallel)
                   .set("ranks", dataParallel)
                   .set("bucket-mb", bucketMb));
        t.insertBefore(PassId::AppendOptimizer, dp);
      }
      // Where attention-layouts follows (-O2's rule, --attention-fusion),
      // the projections go batch-first before autodiff: their backward then
      // has no Transposes around the gradients either.
      if (passes.empty() &&
          std::any_of(pipeline.begin(), pipeline.end(),
                      [](const PassInvocation &p) { return p.is(PassId::AttentionProjections); }))
        t.insertBefore(PassId::Autodiff, Pipeline{PassId::AttentionProjections});
      // Sibling GEMMs of weight arguments as one before attention-fusion
      // (which reads the packed q, k, v in place) and autodiff (one
      // weight-gradient GEMM and one bias sum for the set): by default only
      // attention's q, k, v of equal widths (the BERT family's step 4-6%
      // faster, session 52); --merge-gemms=train every set (gate/up and
      // GQA's q, k, v too: llama and qwen2 5-6% slower then).
      if (mergeGemms != "off" && passes.empty() &&
          std::any_of(pipeline.begin(), pipeline.end(),
                      [](const PassInvocation &p) { return p.is(PassId::MergeGemms); })) {
        Pipeline merge;
        merge.add(PassInvocation(PassId::MergeGemms)
                      .set("trainable", true)
                      .set("heads", mergeGemms == "on"));
        t.insertBefore(PassId::AttentionFusion, merge);
      }
      // A target that aligns GEMMs (CUDA) gets its weights' GEMMs aligned
      // before autodiff, so their backward GEMMs are too.
      if (passes.empty() &&
          std::any_of(pipeline.begin(), pipeline.end(),
                      [](const PassInvocation &p) { return p.is(PassId::AlignGemms); })) {
        Pipeline align;
        align.add(PassInvocation(PassId::AlignGemms).set("trainable", true));
        t.insertBefore(PassId::Autodiff, align);
      }
      pipeline = t.append(pipeline);
    }
    if (eval) {
      std::string low = precision == "fp16" ? "f16" : precision == "bf16" ? "bf16" : "";
      Pipeline e = evalPipeline(lossSpec, trainable, freeze, low);
      pipeline = e.append(pipeline);
    }
    if (precision == "fp16" || precision == "bf16") {
      if (!train && !eval) // (a train or eval step's ran in its own pipeline)
        pipeline.insertBefore(
            pipeline.preFusionAnchor(),
            mixedPrecisionPipeline(precision == "fp16" ? "f16" : "bf16", lowPrecisionIO));
      // conv-gemms' auto rule leaves f32 convs on cuDNN (TF32): tell it.
      pipeline.setOption(PassId::ConvGemms, "low-precision", "1");
      pipeline.setOption(PassId::MixedPrecision, "policy", precisionPolicy);
    } else if (precision != "fp32") {
      fail("unknown --precision '", precision, "' (fp32, fp16 or bf16)");
    }
    if (precisionPolicy != "fast" && precisionPolicy != "autocast")
      fail("--precision-policy takes fast or autocast, not '", precisionPolicy, "'");
    if (vm.count("precision-policy") && precision == "fp32")
      fail("--precision-policy needs --precision fp16 or bf16");
    if ((train || eval) && lowPrecisionIO)
      fail("--low-precision-io: a train step's state and inputs stay f32");
    if (lowPrecisionIO && precision == "fp32")
      fail("--low-precision-io needs --precision fp16 or bf16");
    pm.dumpDir = dumpDirFor("tc-opt", common);
    auto optimize = [&](std::shared_ptr<const MemoryBuffer> buf) {
      auto m = loadModule(std::move(buf));
      specializeDims(*m, dims);
      size_t opsBefore = m->main().ops.size(), kernelsBefore = countKernels(m->main());
      std::optional<NumericsChecker> checker;
      PassManagerOptions runOpts = pm;
      if (verifyNumerics) {
        // Random inputs need sizes: a symbol --dim did not give runs at 2
        // (the IR itself stays symbolic).
        InputSources src = numericInputs;
        for (const Value *a : m->main().args)
          for (const Dim &d : a->type.shape)
            if (d.isSymbolic())
              src.dims.emplace(d.symbol, 2);
        checker.emplace(*m, gatherInputs(m->main(), src), numerics);
        runOpts.afterPass = [&](const PassInvocation &inv, size_t i, const Module &mod, bool ch) {
          checker->afterPass(inv, i, mod, ch);
        };
      }
      PassManager mgr(runOpts);
      mgr.add(pipeline);
      mgr.run(*m, std::cerr);
      for (const PassTiming &t : mgr.timings())
        appendTimeline(*m, {"tc-opt", t.pass, t.seconds});
      if (pm.timePasses)
        mgr.printTimings(std::cerr);
      verifyModule(*m); // never hand on IR that does not verify
      if (checker)
        std::cerr << "verify-numerics: outputs match after all " << checker->passesChecked()
                  << " passes that changed the IR (rtol " << numerics.rtol << ", atol "
                  << numerics.atol << ")\n";
      if (stats)
        std::cerr << "ops: " << opsBefore << " -> " << m->main().ops.size()
                  << "\nkernels: " << kernelsBefore << " -> " << countKernels(m->main()) << "\n";
      if (memoryPlan || memoryPlanBuffers)
        printMemoryPlan(planMemory(m->main(), dims), std::cerr, memoryPlanBuffers);
      if (checkGrads) {
        // The inputs of the forward: every argument that is not state.
        Function inputsOnly;
        std::optional<TrainSignature> sig = trainSignature(*m);
        const std::vector<Value *> &args = m->main().args;
        inputsOnly.args.assign(args.begin(), args.end() - std::ptrdiff_t(sig ? sig->state : 0));
        InputSources src = numericInputs;
        gradCheck.seed = src.seed;
        if (!checkGradients(*m, gatherInputs(inputsOnly, src), gradCheck, std::cout))
          fail("--check-gradients: a gradient differs from its finite difference (rtol ",
               gradCheck.rtol, ", atol ", gradCheck.atol, ")");
      }
      return m;
    };
    if (split)
      return forEachChunk("tc-opt", *MemoryBuffer::open(common.input), common.output,
                          [&](auto buf) { return printModuleToString(*optimize(buf)); });
    writeModule(*optimize(MemoryBuffer::open(common.input)), common);
    return 0;
  });
}

} // namespace tc::tools
