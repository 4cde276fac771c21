#include "builtins.hpp"

namespace lowcomm {

void register_builtin_compressors(CompressorRegistry& registry) {
  registry.add(builtin::none_compressor());
  registry.add(builtin::randomk_compressor());
  registry.add(builtin::topk_compressor());
  registry.add(builtin::quantize_compressor());
  registry.add(builtin::powersgd_compressor());
  registry.add(builtin::dct_topk_compressor());
  registry.add(builtin::sparseloco_compressor());
  registry.add(builtin::majority_vote_compressor());
}

}  // namespace lowcomm
