# What the tests labelled cuda or gpu run (the test preset cuda): the targets that scripts/test.sh
# and scripts/gpu-check.sh build in the CUDA configuration. A test whose executable is missing
# fails in CTest ("Could not find executable"), so a test added to those labels without its
# target here is caught on the next run.
cuda_test_targets=(lowcomm_cli local_rank_test transport_mpi_test kernels_transform_test kernels_encoding_test
                   kernels_optimizer_updates_test kernels_cuda_test compressors_mpi_test strategy_mpi_test
                   demo_fixture_test psyche_fixture_test gpt_kernels_test gpt_model_test gpt_cuda_kernels_test)
