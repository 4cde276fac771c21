#include "lowcomm/config/compute_config.hpp"

#include <string>
#include <vector>

namespace lowcomm {

void add_compute_keys(ConfigSchema& schema) {
  std::vector<std::string> names;
  for (const kernels::Backend backend : available_backends()) names.emplace_back(kernels::to_string(backend));
  schema.string("compute.backend", std::string(kernels::to_string(ExecutionContext{}.backend)),
                "kernels that compute: cpu (optimised: OpenMP, BLAS) or reference (the plain loops that "
                "define every result; slow, for checking)",
                names);
}

ExecutionContext execution_context_from_config(const Config& config) {
  return {.backend = backend_named(config.get_string("compute.backend"))};
}

}  // namespace lowcomm
