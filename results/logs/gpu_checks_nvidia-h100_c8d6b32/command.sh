set -x
env | grep -i "^PYTHON" ; python3 -c "import sys; print(sys.flags.dont_write_bytecode, sys.pycache_prefix)"
ls $HOME/.cache/gpude-site/numba_cuda/numba/cuda/__pycache__ 2>&1 | head -3
mkdir -p $OUT/probe
python3 benchmarks/startup.py --device gpu --pairs all_gpu:F01,naive_gpu:F01 --repeats 2 --out $OUT/probe/startup_before_compileall.csv 2>&1 | grep -v -i warn
time python3 -m compileall -q -j 0 $HOME/.cache/gpude-site src /opt/torch/.venv/lib/python3.12/site-packages > /dev/null 2>&1
python3 benchmarks/startup.py --device gpu --pairs all_gpu:F01,naive_gpu:F01,ide:F05,resident:F01 --repeats 3 --profile --out $OUT/probe/startup_gpu_nvidia-h100.csv 2>&1 | grep -v -i warn
python3 benchmarks/inprocess_batches.py --experiment config/experiments/side_by_side.yaml --implementations ide,ide_x30,resident,resident_x30,all_gpu,all_gpu_x30 --limit 18 --out $OUT/probe/inprocess > $OUT/probe/inprocess.log 2>&1; grep -v -i warn $OUT/probe/inprocess.log | tail -30
cd $OUT && tar czf probe.tar.gz probe && rm -rf probe
