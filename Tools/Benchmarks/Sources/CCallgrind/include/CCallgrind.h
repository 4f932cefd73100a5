// Callgrind's client requests, for counting the instructions of one region of the benchmark:
// run under `valgrind --tool=callgrind --collect-atstart=no`, the counts cover only what runs
// between `jl_callgrind_start` and `jl_callgrind_stop`. Outside valgrind (or without its
// headers) both are no-ops that cost a few instructions.
#ifndef CCALLGRIND_H
#define CCALLGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define JL_HAS_CALLGRIND 1
#endif
#endif

/// Whether the process runs under valgrind (and the headers were there when it was built).
static inline int jl_running_on_valgrind(void) {
#ifdef JL_HAS_CALLGRIND
  return RUNNING_ON_VALGRIND ? 1 : 0;
#else
  return 0;
#endif
}

static inline void jl_callgrind_start(void) {
#ifdef JL_HAS_CALLGRIND
  CALLGRIND_ZERO_STATS;
  CALLGRIND_TOGGLE_COLLECT;
#endif
}

static inline void jl_callgrind_stop(void) {
#ifdef JL_HAS_CALLGRIND
  CALLGRIND_TOGGLE_COLLECT;
#endif
}

#endif
