# Source on the offline GPU host, from the project root:  source .whl/activate.sh .whl
# (scripts/wheelhouse.sh copies this file into the wheel folder as activate.sh: the one folder you carry)
# Installs the carried wheels into ~/.cache/gpude-site (no index) and puts them and ./src on PYTHONPATH.
_whl=${1:-.whl}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $HOME/.cache/gpude-site "$_whl"/*.whl \
  && export PYTHONPATH=$HOME/.cache/gpude-site:$PWD/src${PYTHONPATH:+:$PYTHONPATH} \
  && export PATH=$HOME/.cache/gpude-site/bin:$PATH \
  && python3 -c "import numpy, numba, numba_cuda; from numba import cuda; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'gpu', cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name)"
unset _whl
