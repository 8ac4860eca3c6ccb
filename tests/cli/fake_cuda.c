/* An empty libcuda.so.1: makes `warplens run` find "a driver" on a machine without one, so the
 * tests can check what it does to a program's environment (test_torch_ops_cli.sh). Nothing calls
 * into it: the programs those tests run do not use CUDA. */
int wl_fake_cuda_driver;
