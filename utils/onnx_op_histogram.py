import onnx, sys, glob, collections, os
for p in sorted(glob.glob(sys.argv[1] + "/*.onnx")):
    m = onnx.load(p, load_external_data=False)
    ops = collections.Counter((n.domain + "::" if n.domain else "") + n.op_type for n in m.graph.node)
    opset = [(o.domain, o.version) for o in m.opset_import]
    print(os.path.basename(p), "ir", m.ir_version, "opset", opset, "nodes", len(m.graph.node))
    print("   ", " ".join(f"{k}:{v}" for k, v in sorted(ops.items())))
