// gpude's driver for Brest's jSO (Brest, Sepesy Maucec & Boskovic, CEC 2017): it takes the place of
// their main.cc and is compiled with their unchanged lshade.cc, search_algorithm.cc, de.h and the
// official cec17_test_func.cc they ship (justinjk007/Pentagonal-tiling at 3c4ad79, src/DE/; see
// gpude/implementations/jso_brest/__init__.py).
//
//   jso_brest --function F --dim D --seed S [--max-fes N] [--runs R] [--popsize NP]
//
// F: cec17_fNN (gpude's name) or the number NN (1..30); D: 10, 30, 50 or 100; N: 10000*D by default
// (the competition's budget); R runs, run r seeded with S + r; NP, when given, must be jSO's own
// initial population (round(25 sqrt(D) ln D), set in their main.cc and copied here): the row says it.
// Output: gpude's JSON-lines protocol (gpude/implementations/external.py), one line per progress
// point and a last line per run, each with "trial", "fes", "best_error" and "time_s" (seconds since
// the run started, steady clock; the data files are loaded before the clock starts).
//
// Their random numbers: C's rand() (randDouble() = rand()/RAND_MAX, rand() % n for indices; glibc's
// additive-feedback generator, RAND_MAX = 2^31 - 1), seeded in their main.cc by srand(time(NULL)).
// Here srand((unsigned)(S + r)) (the seed's low 32 bits, srand takes an unsigned int) before run r.
//
// Progress points: their run writes the error after 1, 2, 3, 5, 10, 20, ..., 100 % of MaxFES to the
// stream outFile (CEC's raw-data rule); this driver hands that stream a buffer of its own and reads
// the values (and the time each was written) back, at the FEs their code writes them at. Errors below
// 1e-8 are 0 in their code already (the competition's rule); the driver applies the rule once more.
#include "de.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <streambuf>
#include <string>
#include <vector>

// the globals their main.cc defines (their files declare them extern)
double *OShift, *M, *y, *z, *x_bound;
int ini_flag = 0, n_flag, func_flag, *SS;
int g_function_number;
int g_problem_size;
unsigned int g_max_num_evaluations;
int g_pop_size;
double g_arc_rate;
int g_memory_size;
double g_p_best_rate;
ofstream outFile;

typedef std::chrono::steady_clock Clock;

// The numbers their run writes to outFile, each with the time it was written.
class Checkpoints : public std::streambuf {
 public:
  std::vector<double> values, times;
  Clock::time_point start;
  void reset() { values.clear(); times.clear(); text.clear(); start = Clock::now(); }

 protected:
  int overflow(int c) override {
    if (c == EOF) return 0;
    if (c == ' ' || c == '\n') {
      if (!text.empty()) {
        values.push_back(std::strtod(text.c_str(), nullptr));
        times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
        text.clear();
      }
    } else {
      text.push_back(static_cast<char>(c));
    }
    return c;
  }

 private:
  std::string text;
};

// The FEs at which their run writes to outFile (lshade.cc's chain of tests, in its order).
static std::vector<unsigned> checkpoint_fes(unsigned max_fes, int dim, int pop_size) {
  static const double fractions[] = {0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  std::vector<unsigned> out;
  for (unsigned nfes = (unsigned)pop_size + 1; nfes <= max_fes; ++nfes) {  // the main loop's FEs
    if ((int)nfes % (dim * 100) != 0) continue;
    for (double f : fractions) {
      if ((int)nfes == (int)(f * max_fes)) { out.push_back(nfes); break; }
    }
  }
  return out;
}

static int usage(const char *msg) {
  std::fprintf(stderr, "jso_brest: %s\nusage: jso_brest --function cec17_fNN|NN --dim 10|30|50|100 --seed S "
                       "[--max-fes N] [--runs R] [--popsize NP]\n", msg);
  return 2;
}

static bool parse_ull(const char *s, unsigned long long &out) {
  if (!*s || *s == '-') return false;
  char *end;
  out = std::strtoull(s, &end, 10);
  return *end == '\0';
}

static int function_number(std::string name) {
  for (char &c : name) c = (char)std::tolower((unsigned char)c);  // (gpude may upper-case a name: CEC17_F01)
  std::string digits = name;
  if (name.rfind("cec17_f", 0) == 0) digits = name.substr(7);
  else if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) return -1;
  unsigned long long n;
  if (digits.empty() || digits.size() > 2 || !parse_ull(digits.c_str(), n) || n < 1 || n > 30) return -1;
  return (int)n;
}

static bool readable(const char *path) {
  FILE *f = std::fopen(path, "r");
  if (f) std::fclose(f);
  return f != nullptr;
}

int main(int argc, char **argv) {
  std::string function;
  unsigned long long dim = 0, seed = 0, max_fes = 0, runs = 1, popsize = 0;
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage(("no value after " + a).c_str());
    const char *v = argv[++i];
    bool ok = true;
    if (a == "--function") function = v;
    else if (a == "--dim") ok = parse_ull(v, dim);
    else if (a == "--seed") ok = have_seed = parse_ull(v, seed);
    else if (a == "--max-fes") ok = parse_ull(v, max_fes) && max_fes > 0 && max_fes <= 4000000000ULL;
    else if (a == "--runs") ok = parse_ull(v, runs) && runs > 0;
    else if (a == "--popsize") ok = parse_ull(v, popsize);
    else return usage(("unknown argument " + a).c_str());
    if (!ok) return usage(("bad value for " + a + ": " + v).c_str());
  }
  int fn = function_number(function);
  if (fn < 0) return usage(("--function must be cec17_f01..cec17_f30 or 1..30, got '" + function + "'").c_str());
  if (dim != 10 && dim != 30 && dim != 50 && dim != 100) return usage("--dim must be 10, 30, 50 or 100");
  if (!have_seed) return usage("--seed is required");

  // their main.cc's settings (jSO): D, MaxFES = 10000 D, NP_init = round(25 sqrt(D) ln D), H = 5,
  // archive rate 1, p = 0.25
  g_problem_size = (int)dim;
  g_max_num_evaluations = max_fes ? (unsigned)max_fes : (unsigned)(g_problem_size * 10000);
  g_pop_size = (int)round(sqrt(g_problem_size) * log(g_problem_size) * 25);
  g_memory_size = 5;
  g_arc_rate = 1;
  g_p_best_rate = 0.25;
  g_function_number = fn;
  if (popsize && popsize != (unsigned long long)g_pop_size) {
    std::fprintf(stderr, "jso_brest: jSO sets its own initial population, %d at D = %d (round(25 sqrt(D) ln D)); "
                         "--popsize %llu differs\n", g_pop_size, g_problem_size, popsize);
    return 2;
  }

  // their cec17_test_func reads input_data/ (relative to the working directory) and goes on after a
  // file it cannot open: check first
  char name[256];
  std::snprintf(name, sizeof name, "input_data/M_%d_D%d.txt", fn, g_problem_size);
  std::vector<std::string> needed = {name};
  std::snprintf(name, sizeof name, "input_data/shift_data_%d.txt", fn);
  needed.push_back(name);
  if ((fn >= 11 && fn <= 20) || fn == 29 || fn == 30) {
    std::snprintf(name, sizeof name, "input_data/shuffle_data_%d_D%d.txt", fn, g_problem_size);
    needed.push_back(name);
  }
  for (const std::string &path : needed) {
    if (!readable(path.c_str())) {
      std::fprintf(stderr, "jso_brest: cannot read %s (the working directory's input_data/: `python -m "
                           "gpude.implementations.jso_brest fill` fills it from data/cec/cec2017)\n", path.c_str());
      return 1;
    }
  }
  {  // load the function's data before any clock starts (their code loads it on the first call)
    std::vector<double> x(g_problem_size, 0.0);
    double f;
    cec17_test_func(x.data(), &f, g_problem_size, 1, fn);
  }

  Checkpoints checkpoints;
  outFile.std::ios::rdbuf(&checkpoints);
  outFile << std::scientific << std::setprecision(17);
  std::vector<unsigned> at = checkpoint_fes(g_max_num_evaluations, g_problem_size, g_pop_size);

  for (unsigned long long r = 0; r < runs; ++r) {
    unsigned long long run_seed = seed + r;
    srand((unsigned)(run_seed & 0xffffffffULL));
    checkpoints.reset();
    searchAlgorithm *alg = new LSHADE();
    double error = alg->run();
    double elapsed = std::chrono::duration<double>(Clock::now() - checkpoints.start).count();
    delete alg;
    if (error < 1e-8) error = 0.0;
    if (checkpoints.values.size() == at.size()) {
      for (size_t k = 0; k < at.size(); ++k) {
        double e = checkpoints.values[k] < 1e-8 ? 0.0 : checkpoints.values[k];
        std::printf("{\"trial\": %llu, \"fes\": %u, \"best_error\": %.17g, \"time_s\": %.9f}\n", r, at[k], e,
                    checkpoints.times[k]);
      }
    } else {
      std::fprintf(stderr, "jso_brest: run %llu wrote %zu progress values where %zu were expected; left out\n", r,
                   checkpoints.values.size(), at.size());
    }
    std::printf("{\"trial\": %llu, \"seed\": %llu, \"function\": %d, \"dim\": %d, \"popsize\": %d, \"fes\": %u, "
                "\"best_error\": %.17g, \"time_s\": %.9f}\n", r, run_seed, fn, g_problem_size, g_pop_size,
                g_max_num_evaluations, error, elapsed);
    std::fflush(stdout);
  }
  return 0;
}
