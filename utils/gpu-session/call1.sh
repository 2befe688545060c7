# GPU call 1 (utils/gpu-session/split-kit.sh): unpack part 1 of the kit (LLVM, clang-cpp), start
# the training models' exports (setsid: they outlive the call, while the machine stays warm).
T0=$(date +%s)
mkdir -p /tmp/kit && for d in .kit/p1/*.deb; do dpkg -x "$d" /tmp/kit; done
touch /tmp/kit/.p1-done
echo "p1 unpacked in $(( $(date +%s)-T0 )) s; repo at $PWD"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch,torchvision,transformers,onnx,timm;print('torch',torch.__version__,'tv',torchvision.__version__,'tf',transformers.__version__,'onnx',onnx.__version__)"
mkdir -p /tmp/train-models /tmp/res
setsid nohup bash -c "for m in ${MODELS:-resnet50 bert_base gpt2 llama vit_b_16}; do t=\$(date +%s); python3 utils/bench-train.py --export-for-train /tmp/train-models --models \$m; echo exported \$m rc=\$? \$(( \$(date +%s)-t )) s; done; echo EXPORTS-DONE" > /tmp/res/export.log 2>&1 < /dev/null &
sleep 25; cat /tmp/res/export.log; ls /tmp/train-models
