// The target's functions are static inline, in include/CCallgrind.h.
#include "CCallgrind.h"
