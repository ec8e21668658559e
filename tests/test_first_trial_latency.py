"""benchmarks/first_trial_latency.py: a GPU batch's wait from its lease to its first trial, read from the
lines gpude.core.gpu_lease and gpude.run.trials write into a batch's log."""

from _benchmarks import load_benchmark

latency = load_benchmark("first_trial_latency")


def test_reads_the_lease_and_the_first_trial_of_each_gpu_batch_log(tmp_path, capsys):
    run = tmp_path / "logs_server_1" / "default" / "run_batch"
    (run / "ide").mkdir(parents=True)
    (run / "ide" / "F01.log").write_text(
        "gpude: GPU 0 (GPU-75ee0340, NVIDIA H200) leased at 1000.250\n"
        "ide F01 D=30 NP=50: 5 trials, setup 0.4s (first trial at 1001.000)\n")
    (run / "ide" / "F02.log").write_text(
        "gpude: GPU 0 (GPU-75ee0340, NVIDIA H200) leased at 1000.250, 0.40 s after its process started\n"
        "ide F02 D=30 NP=50: 5 trials, setup 0.0s (first trial at 1000.270)\n")
    # the batch before them on the same GPU released it at 1000.200; another GPU's release does not count
    (run / "ide" / "F00.log").write_text("gpude: GPU 0 (GPU-75ee0340) released at 1000.200\n"
                                         "gpude: GPU 1 (GPU-99999999) released at 1000.240\n")
    (run / "sequential.log").write_text("sequential F01 D=30 NP=50: 5 trials, setup 0.1s (first trial at 5.0)\n")
    out = tmp_path / "first.csv"
    assert latency.main([str(tmp_path / "logs_server_1"), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines == ["run,log,gpu,lease_to_first_trial_s,start_to_first_trial_s,gpu_idle_before_s,setup_s",
                     "logs_server_1,default/run_batch/ide/F01.log,NVIDIA H200,0.75,,0.8,0.4",  # a lease without the age
                     # (the CPU batch: no lease, no row)
                     "logs_server_1,default/run_batch/ide/F02.log,NVIDIA H200,0.02,0.42,0.07,0.0"]
    assert latency.main([str(tmp_path / "empty")]) == 2 and "no batch log" in capsys.readouterr().err
