// glibc's allocator controls (`malloc_trim`), which the Glibc module leaves out.
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
