// pto/pto.hpp -- entry header of the PTO CPU tile-instruction library (namespace pto).
// See ../README.md for the API, layouts, type table and fused-loop functors.
#pragma once
#include "config.hpp"
#include "types.hpp"
#include "simd.hpp"
#include "math.hpp"
#include "tile.hpp"
#include "functors.hpp"
#include "vmap.hpp"
#include "elementwise.hpp"
#include "reduce.hpp"
#include "sort.hpp"
#include "memory.hpp"
#include "indexing.hpp"
#include "gather_sort.hpp"
#include "masks.hpp"
#include "matmul.hpp"
#include "sync.hpp"
