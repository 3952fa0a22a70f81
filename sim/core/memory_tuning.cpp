#include "sim/core/memory_tuning.hpp"

#include <cstddef>  // defines __GLIBC__ on glibc systems, which the test below needs

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace trainsim::core {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc accepts: big vectors come from the heap
  mallopt(M_MMAP_MAX, 0);              // and so do larger ones: never mmap a single block
  mallopt(M_TRIM_THRESHOLD, -1);       // never hand the heap top back to the kernel
  mallopt(M_TOP_PAD, 64 << 20);        // grow the heap in 64 MiB steps
#endif
}

}  // namespace trainsim::core
