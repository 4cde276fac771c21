// RunLog writes what docs/log-format.md describes, checked by reading the file back with the
// plain HDF5 C API; misuse and bad files give LogError naming what is wrong.
#include "lowcomm/log/run_log.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "lowcomm/build_info.hpp"
#include "lowcomm/error.hpp"
#include "synthetic_checks.hpp"
#include "temp_folder.hpp"

namespace lowcomm::test {
namespace {

using testing::HasSubstr;

// Runs `action`, expects a LogError, and returns its message.
template <class Action>
std::string log_error_of(Action&& action) {
  try {
    action();
  } catch (const LogError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no LogError thrown";
  return {};
}

RunMetadata sample_metadata() {
  RunMetadata metadata;
  metadata.config_text = "[model]\nlayers = 2\n";
  metadata.world_size = kSyntheticWorldSize;
  metadata.hosts = {"node-a", "node-b", "node-b"};
  metadata.seed = (std::uint64_t{1} << 63) + 5;  // beyond int64: the attribute is unsigned
  metadata.git_revision = "0123abc";
  metadata.lowcomm_version = "0.1.0";
  metadata.start_time = "2024-05-01T12:00:00Z";
  metadata.slurm_job_id = "4242";
  metadata.slurm_restart_count = "0";
  metadata.extra = {{"strategy", "diloco"}, {"compressor", "topk"}};
  return metadata;
}

LogSchema synthetic_schema() { return training_log_schema(kSyntheticWorldSize); }

RunLog create_with_steps(const std::filesystem::path& path, std::int64_t steps) {
  RunLog log = RunLog::create(path, synthetic_schema(), sample_metadata());
  for (std::int64_t step = 0; step < steps; ++step) write_synthetic_step(log, step);
  return log;
}

TEST(RunLogCreate, WritesMetadataAsRootAttributes) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  RunLog::create(path, synthetic_schema(), sample_metadata()).close();

  const Hdf5Object file = open_for_reading(path);
  const hid_t root = file.get();
  EXPECT_EQ(read_number_attribute<std::int64_t>(root, "format_version"), 2);
  EXPECT_EQ(read_string_attribute(root, "config"), "[model]\nlayers = 2\n");
  EXPECT_EQ(read_number_attribute<std::int64_t>(root, "world_size"), 3);
  EXPECT_THAT(read_strings_attribute(root, "hosts"),
              testing::ElementsAre("node-a", "node-b", "node-b"));
  EXPECT_EQ(read_number_attribute<std::uint64_t>(root, "seed"), (std::uint64_t{1} << 63) + 5);
  EXPECT_EQ(read_string_attribute(root, "git_revision"), "0123abc");
  EXPECT_EQ(read_string_attribute(root, "lowcomm_version"), "0.1.0");
  EXPECT_EQ(read_string_attribute(root, "start_time"), "2024-05-01T12:00:00Z");
  EXPECT_EQ(read_string_attribute(root, "slurm_job_id"), "4242");
  EXPECT_EQ(read_string_attribute(root, "slurm_restart_count"), "0");
  EXPECT_FALSE(has_attribute(root, "slurm_array_job_id"));
  EXPECT_FALSE(has_attribute(root, "slurm_array_task_id"));
  EXPECT_EQ(read_number_attribute<std::int64_t>(root, "resume_count"), 0);
  EXPECT_EQ(read_string_attribute(root, "strategy"), "diloco");
  EXPECT_EQ(read_string_attribute(root, "compressor"), "topk");
}

TEST(RunLogCreate, WritesEveryValueOfEveryColumn) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  RunLog log = create_with_steps(path, 25);
  EXPECT_EQ(log.rows("steps"), 25);
  EXPECT_EQ(log.rows("eval"), 2);
  log.close();

  const Hdf5Object file = open_for_reading(path);
  expect_synthetic_steps(file.get(), step_range(0, 25));
  EXPECT_THAT(dataset_dims(file.get(), "/steps/loss"), testing::ElementsAre(25));
  EXPECT_THAT(dataset_dims(file.get(), "/steps/bytes_sent"), testing::ElementsAre(25, 3));
  EXPECT_THAT(read_dataset<std::int64_t>(file.get(), "/eval/step"), testing::ElementsAre(9, 19));
  EXPECT_THAT(read_dataset<double>(file.get(), "/eval/val_loss"),
              testing::ElementsAre(synthetic_val_loss(9), synthetic_val_loss(19)));
}

TEST(RunLogCreate, DatasetsCarryUnitAndDescription) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  RunLog::create(path, synthetic_schema(), sample_metadata()).close();

  const Hdf5Object file = open_for_reading(path);
  const LogSchema schema = synthetic_schema();
  for (const TableSchema& table : schema.tables) {
    for (const Column& column : table.columns) {
      const std::string name = "/" + table.name + "/" + column.name;
      SCOPED_TRACE(name);
      const Hdf5Object dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, name);
      EXPECT_EQ(read_string_attribute(dataset.get(), "unit"), column.unit);
      EXPECT_FALSE(column.unit.empty());
      EXPECT_EQ(read_string_attribute(dataset.get(), "description"), column.description);
      EXPECT_FALSE(column.description.empty());
    }
  }
}

TEST(RunLogCreate, RefusesAnExistingFileUnlessOverwriting) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 3).close();
  EXPECT_THAT(log_error_of([&] { RunLog::create(path, synthetic_schema(), sample_metadata()); }),
              HasSubstr("already exists"));

  RunLog::create(path, synthetic_schema(), sample_metadata(), {}, /*overwrite=*/true).close();
  const Hdf5Object file = open_for_reading(path);
  EXPECT_THAT(dataset_dims(file.get(), "/steps/step"), testing::ElementsAre(0));
}

TEST(RunLogCreate, RefusesAMissingFolder) {
  const TempFolder folder;
  EXPECT_THAT(log_error_of([&] {
                RunLog::create(folder / "no/such/folder/run.h5", synthetic_schema(),
                               sample_metadata());
              }),
              HasSubstr("folder does not exist"));
}

TEST(RunLogCreate, RejectsMalformedSchemas) {
  const TempFolder folder;
  const auto create = [&](LogSchema schema) {
    return log_error_of([&] { RunLog::create(folder / "bad.h5", schema, sample_metadata()); });
  };
  const Column value{"value", ColumnType::Float64};
  EXPECT_THAT(create({{{"t", {value, value}}}}), HasSubstr("'t/value' is declared twice"));
  EXPECT_THAT(create({{{"t", {value}}, {"t", {value}}}}), HasSubstr("'t' is declared twice"));
  EXPECT_THAT(create({{{"a/b", {value}}}}), HasSubstr("'a/b'"));
  EXPECT_THAT(create({{{"t", {}}}}), HasSubstr("no columns"));
  EXPECT_THAT(create({{{"t", {{"wide", ColumnType::Int64, 0}}}}}), HasSubstr("width 0"));
  EXPECT_THAT(create({{{"t", {{"step", ColumnType::Float64}}}}}), HasSubstr("'t/step'"));
  EXPECT_FALSE(std::filesystem::exists(folder / "bad.h5"));
}

TEST(RunLogCreate, RejectsExtraMetadataThatShadowsTheLogsOwn) {
  const TempFolder folder;
  RunMetadata metadata = sample_metadata();
  metadata.extra["seed"] = "1";
  EXPECT_THAT(
      log_error_of([&] { RunLog::create(folder / "run.h5", synthetic_schema(), metadata); }),
      HasSubstr("'seed'"));
  EXPECT_FALSE(std::filesystem::exists(folder / "run.h5"));  // no half-made log left behind
}

TEST(RunLogRows, MisuseNamesTheTableOrColumn) {
  const TempFolder folder;
  RunLog log = RunLog::create(folder / "run.h5", synthetic_schema(), sample_metadata());
  EXPECT_THAT(log_error_of([&] { log.row("nope"); }), HasSubstr("no table 'nope'"));
  EXPECT_THAT(log_error_of([&] { log.rows("nope"); }), HasSubstr("no table 'nope'"));
  RowValues row = log.row("steps");
  EXPECT_THAT(log_error_of([&] { row.set("nope", 1.0); }), HasSubstr("no column 'nope'"));
  EXPECT_THAT(log_error_of([&] { row.set("step", 1.0); }), HasSubstr("'steps/step' holds Int64"));
  const std::vector<std::int64_t> two_ranks = {1, 2};
  EXPECT_THAT(log_error_of([&] { row.set("bytes_sent", two_ranks); }),
              HasSubstr("'steps/bytes_sent' takes 3 value(s) per row, got 2"));
  EXPECT_THAT(log_error_of([&] { row.set("tokens", two_ranks); }),
              HasSubstr("'steps/tokens' takes 1 value(s) per row, got 2"));

  RowValues incomplete = log.row("steps");
  const LogSchema schema = synthetic_schema();
  for (const Column& column : schema.tables[0].columns) {
    if (column.name == "grad_norm") continue;
    if (column.width > 1) {
      incomplete.set(column.name, std::vector<std::int64_t>(3));
    } else if (column.type == ColumnType::Int64) {
      incomplete.set(column.name, std::int64_t{0});
    } else {
      incomplete.set(column.name, 0.0);
    }
  }
  EXPECT_THAT(log_error_of([&] { log.write_row(incomplete); }), HasSubstr("'grad_norm'"));
  EXPECT_EQ(log.rows("steps"), 0);

  RunLog other = RunLog::create(folder / "other.h5", synthetic_schema(), sample_metadata());
  EXPECT_THAT(log_error_of([&] { log.write_row(synthetic_step_row(other, 0)); }),
              HasSubstr("another RunLog"));
}

TEST(RunLogRows, ClosedOrMovedFromLogRefusesRows) {
  const TempFolder folder;
  RunLog log = RunLog::create(folder / "run.h5", synthetic_schema(), sample_metadata());
  RunLog moved = std::move(log);
  EXPECT_THAT(log_error_of([&] { log.row("steps"); }), HasSubstr("closed"));
  moved.write_row(synthetic_step_row(moved, 0));
  moved.close();
  moved.close();  // closing twice is harmless
  EXPECT_THAT(log_error_of([&] { moved.rows("steps"); }), HasSubstr("closed"));
}

TEST(RunLogAppend, KeepsEarlierRowsAndContinues) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 12).close();
  for (int resume = 1; resume <= 2; ++resume) {
    RunLog log = RunLog::append(path, synthetic_schema());
    EXPECT_EQ(log.rows("steps"), 12 * resume);
    for (std::int64_t step = 12 * resume; step < 12 * (resume + 1); ++step) {
      write_synthetic_step(log, step);
    }
  }
  const Hdf5Object file = open_for_reading(path);
  expect_synthetic_steps(file.get(), step_range(0, 36));
  EXPECT_THAT(read_dataset<std::int64_t>(file.get(), "/eval/step"),
              testing::ElementsAre(9, 19, 29));
  EXPECT_EQ(read_number_attribute<std::int64_t>(file.get(), "resume_count"), 2);
  EXPECT_EQ(read_string_attribute(file.get(), "config"), "[model]\nlayers = 2\n");
}

TEST(RunLogAppend, RecordsTheSlurmRestartCount) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 1).close();
  setenv("SLURM_RESTART_COUNT", "3", 1);
  RunLog::append(path, synthetic_schema()).close();
  unsetenv("SLURM_RESTART_COUNT");
  const Hdf5Object file = open_for_reading(path);
  EXPECT_EQ(read_string_attribute(file.get(), "slurm_restart_count"), "3");
}

TEST(RunLogAppend, DropsRowsFromTheResumedStep) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 25).close();
  {
    RunLog log = RunLog::append(path, synthetic_schema(), {}, /*drop_rows_from_step=*/15);
    EXPECT_EQ(log.rows("steps"), 15);
    EXPECT_EQ(log.rows("eval"), 1);  // step 9 stays, step 19 goes
    for (std::int64_t step = 15; step < 22; ++step) write_synthetic_step(log, step);
  }
  const Hdf5Object file = open_for_reading(path);
  EXPECT_EQ(dataset_dims(file.get(), "/steps/step")[0], 22u);
  expect_synthetic_steps(file.get(), step_range(0, 22));
  EXPECT_THAT(read_dataset<std::int64_t>(file.get(), "/eval/step"),
              testing::ElementsAre(9, 19));
}

// Steps out of order (a run that resumed without dropping): only the rows at or after the step
// go, the others keep their order and values.
TEST(RunLogAppend, DropsRowsThatAreNotATail) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 5).close();
  {
    RunLog log = RunLog::append(path, synthetic_schema());
    for (std::int64_t step = 3; step < 6; ++step) write_synthetic_step(log, step);
  }
  RunLog::append(path, synthetic_schema(), {}, 4).close();
  const Hdf5Object file = open_for_reading(path);
  EXPECT_EQ(dataset_dims(file.get(), "/steps/step")[0], 5u);
  expect_synthetic_steps(file.get(), {0, 1, 2, 3, 3});
}

TEST(RunLogAppend, RejectsADifferentSchema) {
  const TempFolder folder;
  const auto path = folder / "run.h5";
  create_with_steps(path, 2).close();

  EXPECT_THAT(log_error_of([&] { RunLog::append(path, training_log_schema(4)); }),
              HasSubstr("/steps/bytes_sent"));
  LogSchema extra_column = synthetic_schema();
  extra_column.tables[0].columns.push_back({"perplexity", ColumnType::Float64});
  EXPECT_THAT(log_error_of([&] { RunLog::append(path, extra_column); }),
              HasSubstr("lacks column /steps/perplexity"));
  LogSchema missing_column = synthetic_schema();
  missing_column.tables[1].columns.pop_back();
  EXPECT_THAT(log_error_of([&] { RunLog::append(path, missing_column); }),
              HasSubstr("'eval/val_loss' that the schema lacks"));
  LogSchema retyped = synthetic_schema();
  retyped.tables[0].columns[3].type = ColumnType::Float64;
  EXPECT_THAT(log_error_of([&] { RunLog::append(path, retyped); }),
              HasSubstr("/steps/tokens in the file is not Float64"));
  LogSchema extra_table = synthetic_schema();
  extra_table.tables.push_back({"memory", {{"peak", ColumnType::Int64}}});
  EXPECT_THAT(log_error_of([&] { RunLog::append(path, extra_table); }),
              HasSubstr("no table 'memory'"));
  LogSchema missing_table = synthetic_schema();
  missing_table.tables.pop_back();
  EXPECT_THAT(log_error_of([&] { RunLog::append(path, missing_table); }),
              HasSubstr("table 'eval' that the schema lacks"));

  // The failed attempts changed nothing.
  RunLog log = RunLog::append(path, synthetic_schema());
  EXPECT_EQ(log.rows("steps"), 2);
}

TEST(RunLogAppend, RejectsFilesThatAreNotRunLogs) {
  const TempFolder folder;
  const auto garbage = folder / "garbage.h5";
  std::ofstream(garbage) << "this is not HDF5\n";
  EXPECT_THAT(log_error_of([&] { RunLog::append(garbage, synthetic_schema()); }),
              HasSubstr("cannot open the file for appending"));

  // HDF5 would open an empty file for writing as a new one; append must not.
  const auto empty = folder / "empty.h5";
  std::ofstream(empty).close();
  EXPECT_THAT(log_error_of([&] { RunLog::append(empty, synthetic_schema()); }),
              HasSubstr("empty"));
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  EXPECT_THAT(log_error_of([&] { RunLog::append(folder / "missing.h5", synthetic_schema()); }),
              HasSubstr("no such file"));

  // A log cut short, as by a full disk: every prefix must fail cleanly, never crash.
  const auto whole = folder / "whole.h5";
  create_with_steps(whole, 40).close();
  const auto size = std::filesystem::file_size(whole);
  const auto cut = folder / "cut.h5";
  for (const auto keep : {size / 8, size / 2, size - 100}) {
    std::filesystem::copy_file(whole, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, keep);
    EXPECT_THAT(log_error_of([&] { RunLog::append(cut, synthetic_schema()); }),
                HasSubstr("run log " + cut.string()));
  }

  const auto foreign = folder / "foreign.h5";
  {
    const Hdf5Object file(H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                          H5Fclose, "create");
  }
  EXPECT_THAT(log_error_of([&] { RunLog::append(foreign, synthetic_schema()); }),
              HasSubstr("not a lowcomm run log"));
}

TEST(RunMetadata, ForThisProcessReadsBuildInfoAndSlurm) {
  setenv("SLURM_JOB_ID", "100", 1);
  setenv("SLURM_ARRAY_JOB_ID", "99", 1);
  setenv("SLURM_ARRAY_TASK_ID", "7", 1);
  unsetenv("SLURM_RESTART_COUNT");
  const RunMetadata metadata = RunMetadata::for_this_process("x = 1\n", 2, {"h0", "h1"}, 42);
  unsetenv("SLURM_JOB_ID");
  unsetenv("SLURM_ARRAY_JOB_ID");
  unsetenv("SLURM_ARRAY_TASK_ID");
  EXPECT_EQ(metadata.config_text, "x = 1\n");
  EXPECT_EQ(metadata.world_size, 2);
  EXPECT_THAT(metadata.hosts, testing::ElementsAre("h0", "h1"));
  EXPECT_EQ(metadata.seed, 42u);
  EXPECT_EQ(metadata.git_revision, build_info().git_revision);
  EXPECT_EQ(metadata.lowcomm_version, build_info().version);
  EXPECT_THAT(metadata.start_time,
              testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"));
  EXPECT_EQ(metadata.slurm_job_id, "100");
  EXPECT_EQ(metadata.slurm_array_job_id, "99");
  EXPECT_EQ(metadata.slurm_array_task_id, "7");
  EXPECT_EQ(metadata.slurm_restart_count, std::nullopt);
}

TEST(TrainingLogSchema, HasPerRankByteColumns) {
  const LogSchema schema = training_log_schema(5);
  ASSERT_EQ(schema.tables.size(), 2u);
  EXPECT_EQ(schema.tables[0].name, "steps");
  EXPECT_EQ(schema.tables[1].name, "eval");
  for (const Column& column : schema.tables[0].columns) {
    const bool per_rank = column.name == "bytes_sent" || column.name == "bytes_received" || column.name == "present";
    EXPECT_EQ(column.width, per_rank ? 5u : 1u) << column.name;
  }
  EXPECT_THROW(training_log_schema(0), LogError);
}

// A one-rank run keeps per-rank columns 2-D, so analysis code indexes [row, rank] everywhere.
TEST(TrainingLogSchema, PerRankColumnsStayTwoDimensionalForOneRank) {
  const TempFolder folder;
  const LogSchema schema = training_log_schema(1);
  RunLog log = RunLog::create(folder / "run.h5", schema, sample_metadata());
  RowValues row = log.row("steps");
  for (const Column& column : schema.tables[0].columns) {
    if (column.two_dimensional) {
      row.set(column.name, std::vector<std::int64_t>{42});
    } else if (column.type == ColumnType::Int64) {
      row.set(column.name, 7);  // a plain int converts to the Int64 column
    } else {
      row.set(column.name, 0.5);
    }
  }
  log.write_row(row);
  log.close();
  const Hdf5Object file = open_for_reading(folder / "run.h5");
  EXPECT_EQ(dataset_dims(file.get(), "steps/bytes_sent"), (std::vector<hsize_t>{1, 1}));
  EXPECT_EQ(dataset_dims(file.get(), "steps/loss"), (std::vector<hsize_t>{1}));
  EXPECT_EQ(read_dataset<std::int64_t>(file.get(), "steps/bytes_received"),
            std::vector<std::int64_t>{42});
  EXPECT_EQ(read_dataset<std::int64_t>(file.get(), "steps/step"), std::vector<std::int64_t>{7});
}

LogSchema schema_with_arrays() {
  LogSchema schema = synthetic_schema();
  schema.arrays = {{"params/w", ArrayType::Float32, {3, 2, 4}, "1", "a parameter"},
                   {"dense", ArrayType::Int64, {2}, "bytes", "per rank"}};
  return schema;
}

TEST(RunLogArrays, WritesBlocksWhereTheyBelong) {
  const TempFolder folder;
  RunLog log = RunLog::create(folder / "run.h5", schema_with_arrays(), sample_metadata());
  const std::vector<std::int64_t> dense{10, 20};
  log.write_array("dense", {}, std::span<const std::int64_t>(dense));
  for (std::uint64_t row = 0; row < 3; ++row) {
    for (std::uint64_t rank = 0; rank < 2; ++rank) {
      std::vector<float> block(4);
      for (std::size_t i = 0; i < 4; ++i) block[i] = static_cast<float>(100 * row + 10 * rank + i) + 0.5f;
      const std::uint64_t leading[] = {row, rank};
      log.write_array("params/w", leading, std::span<const float>(block));
    }
  }
  write_synthetic_step(log, 0);
  log.close();
  const Hdf5Object file = open_for_reading(folder / "run.h5");
  EXPECT_EQ(dataset_dims(file.get(), "params/w"), (std::vector<hsize_t>{3, 2, 4}));
  const std::vector<double> values = read_dataset<double>(file.get(), "params/w");
  for (std::size_t row = 0; row < 3; ++row) {
    for (std::size_t rank = 0; rank < 2; ++rank) {
      for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(values[(row * 2 + rank) * 4 + i], static_cast<double>(100 * row + 10 * rank + i) + 0.5);
      }
    }
  }
  EXPECT_EQ(read_dataset<std::int64_t>(file.get(), "dense"), dense);
  const Hdf5Object array(H5Dopen2(file.get(), "params/w", H5P_DEFAULT), H5Dclose, "params/w");
  EXPECT_EQ(read_string_attribute(array.get(), "description"), "a parameter");
}

TEST(RunLogArrays, MisuseNamesTheArray) {
  const TempFolder folder;
  RunLog log = RunLog::create(folder / "run.h5", schema_with_arrays(), sample_metadata());
  const std::vector<float> four(4), three(3);
  const std::vector<double> doubles(4);
  const std::uint64_t inside[] = {2, 1}, outside[] = {3, 0};
  EXPECT_THAT(log_error_of([&] { log.write_array("params/v", inside, std::span<const float>(four)); }),
              HasSubstr("no array 'params/v'"));
  EXPECT_THAT(log_error_of([&] { log.write_array("params/w", inside, std::span<const double>(doubles)); }),
              HasSubstr("holds Float32, not Float64"));
  EXPECT_THAT(log_error_of([&] { log.write_array("params/w", outside, std::span<const float>(four)); }),
              HasSubstr("index 0 of array 'params/w' is 3; its extent is 3"));
  EXPECT_THAT(log_error_of([&] { log.write_array("params/w", inside, std::span<const float>(three)); }),
              HasSubstr("holds 4 values, not 3"));
}

TEST(RunLogArrays, SchemaRulesAndNoAppending) {
  const TempFolder folder;
  const auto create = [&](std::vector<ArraySchema> arrays) {
    LogSchema schema = synthetic_schema();
    schema.arrays = std::move(arrays);
    return log_error_of([&] { RunLog::create(folder / "bad.h5", schema, sample_metadata()); });
  };
  EXPECT_THAT(create({{"steps/x", ArrayType::Int64, {1}}}), HasSubstr("inside table 'steps'"));
  EXPECT_THAT(create({{"a", ArrayType::Int64, {1}}, {"a", ArrayType::Int64, {2}}}), HasSubstr("'a' is declared twice"));
  EXPECT_THAT(create({{"a", ArrayType::Int64, {}}}), HasSubstr("at least one dimension"));
  EXPECT_THAT(create({{"a", ArrayType::Int64, {2, 0}}}), HasSubstr("extent 1 or more"));
  EXPECT_THAT(create({{"a//b", ArrayType::Int64, {1}}}), HasSubstr("path component"));
  EXPECT_FALSE(std::filesystem::exists(folder / "bad.h5"));
  RunLog::create(folder / "run.h5", schema_with_arrays(), sample_metadata()).close();
  EXPECT_THAT(log_error_of([&] { RunLog::append(folder / "run.h5", schema_with_arrays()); }),
              HasSubstr("schema has arrays"));
}

TEST(ReplayLogSchema, SharesTheTrainingLogsTrafficColumns) {
  const std::vector<TensorInfo> tensors{{"b", {5}}, {"a", {2, 3}}};
  const LogSchema replay = replay_log_schema(3, tensors, 4);
  const LogSchema training = training_log_schema(3);
  for (const Column& traffic : step_traffic_columns(3)) {
    const auto named = [&](const LogSchema& schema) {
      return std::ranges::count_if(schema.tables[0].columns, [&](const Column& c) {
        return c.name == traffic.name && c.type == traffic.type && c.width == traffic.width;
      });
    };
    EXPECT_EQ(named(replay), 1) << traffic.name;
    EXPECT_EQ(named(training), 1) << traffic.name;
  }
  ASSERT_EQ(replay.arrays.size(), 3u);
  EXPECT_EQ(replay.arrays[0].name, "params/b");
  EXPECT_EQ(replay.arrays[0].shape, (std::vector<std::uint64_t>{5, 3, 5}));
  EXPECT_EQ(replay.arrays[1].shape, (std::vector<std::uint64_t>{5, 3, 2, 3}));
  EXPECT_EQ(replay.arrays[2].name, "dense_bytes_sent");
  EXPECT_THROW(replay_log_schema(3, tensors, 0), LogError);
}

}  // namespace
}  // namespace lowcomm::test
