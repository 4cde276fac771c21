"""Method labels from a resolved config (no lowcomm needed)."""

from types import SimpleNamespace

from analysis.methods import assign_labels, method_label


def config(strategy="data_parallel", compressor="none", **sections):
    cfg = {"seed": 0, "strategy": {"name": strategy}, "compressor": {"name": compressor},
           "network": {"scenario": "consumer"}, "train": {"steps": 10}}
    for key, value in sections.items():
        node = cfg
        parts = key.split("__")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return cfg


def test_labels():
    assert method_label(config()) == "data_parallel/none"
    assert method_label(config(compressor="topk", compressor__topk__ratio=0.01,
                               compressor__topk__error_feedback=True)) == \
        "data_parallel/topk ratio=0.01"
    assert method_label(config(compressor="topk", compressor__topk__ratio=0.01,
                               compressor__topk__error_feedback=False)) == \
        "data_parallel/topk ratio=0.01 no-EF"
    assert method_label(config(compressor="powersgd", compressor__powersgd__rank=4)) == \
        "data_parallel/powersgd rank=4"
    assert method_label(config(strategy="demo", compressor__dct_topk__topk=8)) == "demo/dct_topk k=8"
    assert method_label(config(strategy="demo", compressor__dct_topk__chunk=32,
                               compressor__dct_topk__wire="compact")) == "demo/dct_topk k=32 chunk=32 wire=compact"
    # Logs written when DeMo's reference names were keys of their own.
    assert method_label(config(strategy="demo", strategy__demo__compression_topk=8)) == \
        "demo/dct_topk k=8"
    assert method_label(config(strategy="demo", strategy__demo__compression_topk=32,
                               strategy__demo__wire="compact_1bit")) == \
        "demo/dct_topk k=32 wire=compact_1bit"
    assert method_label(config(strategy="diloco", strategy__diloco__inner_steps=50,
                               strategy__diloco__fragments=2, compressor__none__value_type="bf16")) \
        == "diloco H=50 F=2/none bf16"
    assert method_label(config(strategy="desloc", strategy__desloc__param_period=4)) == "desloc Kx=4 Ku=48 Kv=96/none"
    assert method_label(config(optimizer__name="muon")) == "data_parallel muon/none"
    assert method_label(config(strategy="noloco")) == "noloco H=50/none"
    assert method_label(config(strategy="noloco", strategy__noloco__inner_steps=5,
                               strategy__noloco__pull=0.3)) == "noloco H=5 pull=0.3/none"
    assert method_label(config(strategy="onebit_adam", strategy__onebit_adam__freeze_step=256)) == \
        "onebit_adam freeze=256/none"
    assert method_label(config(strategy="zero_one_adam", strategy__zero_one_adam__var_freeze_step=256)) == \
        "zero_one_adam freeze=256 local<=16/none"
    assert method_label(config(strategy="demo", strategy__demo__pipeline="psyche",
                               strategy__demo__wire="compact_1bit", compressor__dct_topk__topk=4)) == \
        "demo/dct_topk k=4 wire=compact_1bit psyche"
    assert method_label(config(strategy="demo", strategy__demo__stale=True)) == "demo/dct_topk k=32 stale"
    assert method_label(config(optimizer__name="sgd", compressor="majority_vote",
                               compressor__majority_vote__momentum=0.9)) == \
        "data_parallel sgd/majority_vote momentum=0.9"
    assert method_label(config(strategy="diloco", strategy__diloco__inner_steps=30, compressor="sparseloco",
                               compressor__sparseloco__error_feedback_decay=0.95)) == "diloco H=30/sparseloco beta=0.95"
    assert method_label(config(strategy="diloco", strategy__diloco__inner_steps=30, optimizer__name="muon",
                               compressor="topk", compressor__topk__ratio=0.1)) == "diloco H=30 muon/topk ratio=0.1"
    # The merge trees (exchange = "tree") and their groups; the gather and the all-reduce are unnamed.
    assert method_label(config(strategy="demo", compressor__dct_topk__topk=8, compressor__dct_topk__exchange="tree",
                               compressor__merge_groups="regions")) == \
        "demo/dct_topk k=8 exchange=tree merge_groups=regions"
    assert method_label(config(strategy="demo", compressor__dct_topk__exchange="gather")) == "demo/dct_topk k=32"
    assert method_label(config(compressor="topk", compressor__topk__ratio=0.01, compressor__topk__exchange="tree")) == \
        "data_parallel/topk ratio=0.01 exchange=tree"
    assert method_label(config(compressor__none__exchange="tree", compressor__merge_groups="4")) == \
        "data_parallel/none exchange=tree merge_groups=4"
    assert method_label(config(compressor__none__exchange="all_reduce")) == "data_parallel/none"


def _run(cfg, world=2):
    return SimpleNamespace(config=cfg, attrs={}, world_size=world, label="")


def test_differing_keys_split_a_label_but_seeds_and_networks_do_not():
    a = _run(config(strategy="demo", schedule__lr=1e-3))
    b = _run(config(strategy="demo", schedule__lr=5e-4))
    c = _run(config(strategy="demo", schedule__lr=5e-4, seed=1, network__scenario="10gbps",
                    train__steps=99))
    d = _run(config())
    assign_labels([a, b, c, d])
    assert a.label == "demo/dct_topk k=32 lr=0.001"
    assert b.label == c.label == "demo/dct_topk k=32 lr=0.0005"
    assert d.label == "data_parallel/none"
    e, f = _run(config(), world=2), _run(config(), world=4)
    assign_labels([e, f], method_keys=["schedule.lr"])
    assert e.label == "data_parallel/none lr=- W=2" and f.label == "data_parallel/none lr=- W=4"
    # A key given twice (--method-key and --best-of) joins the label once.
    assign_labels([a, b], method_keys=["schedule.lr", "schedule.lr"])
    assert a.label == "demo/dct_topk k=32 lr=0.001"


def test_target_pivot_names_the_rank_count_once():
    import pandas as pd

    from analysis.tables import target_pivot
    rows = [{"method": "demo/dct_topk k=8 W=4", "world_size": 4, "scenario": "consumer", "n": 2, "reached_val": 2,
             "time_to_target_val_s_mean": 10.0, "time_to_target_val_s_std": 1.0},
            {"method": "demo/dct_topk k=8 W=16", "world_size": 16, "scenario": "consumer", "n": 2, "reached_val": 1,
             "time_to_target_val_s_mean": 20.0, "time_to_target_val_s_std": 0.0},
            {"method": "data_parallel/none", "world_size": 16, "scenario": "consumer", "n": 1, "reached_val": 1,
             "time_to_target_val_s_mean": 5.0, "time_to_target_val_s_std": 0.0}]
    assert sorted(target_pivot(pd.DataFrame(rows))["method"]) == \
        ["data_parallel/none W=16", "demo/dct_topk k=8 W=16", "demo/dct_topk k=8 W=4"]
