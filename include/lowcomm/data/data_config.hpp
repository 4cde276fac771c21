#pragma once
// The data.* configuration keys and the loader they describe (docs/data.md lists them):
//   data.source = brown (default: data.dir/train.bin and val.bin, made by
//                 `lowcomm prepare-data`) | shards (data.train, data.val: llm.c shard files)
//                 | markov (the synthetic chain of markov_source.hpp, data.markov.*)
// plus the batch shape, the loader seed and the validation set size.
#include <optional>
#include <string>

#include "lowcomm/config/config.hpp"
#include "lowcomm/data/data_loader.hpp"

namespace lowcomm {

void add_data_keys(ConfigSchema& schema);

struct TrainingData {
  DataLoader loader;
  int vocab_size = 256;              // data.vocab_size: the model's vocabulary
  std::string description;           // one line for logs, e.g. "brown: data/brown/train.bin (...)"
  std::optional<double> loss_floor;  // nats/token: the Markov chain's entropy rate, else none
  // For markov: the exact floor of the validation set (MarkovSource::conditional_entropy of the
  // validation tokens); else none.
  std::optional<double> val_loss_floor;
};

// The loader for `rank` of `world_size` from a configuration built with add_data_keys. Throws
// lowcomm::ConfigError naming the key to change (a missing shard path, a Brown folder not
// prepared yet with the command that prepares it, ...) and lowcomm::Error for unreadable shards.
TrainingData make_training_data(const Config& config, int rank, int world_size);

}  // namespace lowcomm
