"""``PreboundCopy``: the first rows of a host buffer to the device and back, on a stream (the
driver's async copies on a GPU, numba's on the simulator), nothing past the rows asked for."""

import numpy as np
import pytest
from numba import cuda

from gpude.core.prebound import PreboundCopy

pytestmark = pytest.mark.cudasim


@pytest.mark.parametrize("shape", [(5, 3), (7,)])
def test_rows_go_and_come_back_and_no_others(shape):
    stream = cuda.stream()
    host = cuda.pinned_array(shape, np.float32)
    host[:] = np.arange(host.size, dtype=np.float32).reshape(shape)
    device = cuda.to_device(np.full(shape, -1.0, np.float32))
    PreboundCopy(device, host, stream, to_device=True).copy(3)
    stream.synchronize()
    want = np.full(shape, -1.0, np.float32)
    want[:3] = host[:3]
    np.testing.assert_array_equal(device.copy_to_host(), want)
    back = cuda.pinned_array(shape, np.float32)
    back[:] = 7.0
    PreboundCopy(device, back, stream, to_device=False).copy(2)
    stream.synchronize()
    want = np.full(shape, 7.0, np.float32)
    want[:2] = host[:2]
    np.testing.assert_array_equal(back, want)


def test_mismatched_buffers_are_refused():
    with pytest.raises(ValueError, match="differ"):
        PreboundCopy(cuda.device_array((4, 3), np.float32), np.zeros((4, 3), np.float64), cuda.stream(), True)
