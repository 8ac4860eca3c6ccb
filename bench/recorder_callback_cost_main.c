/* bench_callback_cost: the measurement lives in the library with the recorder's sources
 * (recorder_callback_cost.c), so that it runs the recorder's code as the injected library builds it. */
int wl_bench_callback_cost(int argc, char **argv);

int main(int argc, char **argv) { return wl_bench_callback_cost(argc, argv); }
