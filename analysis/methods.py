"""Method labels: which runs are the same method (and differ only in seed and network).

A log written by `lowcomm train` carries its label (attribute ``label``, made from each
strategy's and compressor's registration: include/lowcomm/strategy/method_label.hpp), and that is
the label; for a log written before, the rules below derive the same (analysis/tests/
test_labels.py holds the two together). A label is ``<strategy>/<compressor> <parameters>``:

- ``data_parallel/<compressor>``: the compressor's main parameter, e.g.
  ``data_parallel/topk ratio=0.01``, ``data_parallel/powersgd rank=4``,
  ``data_parallel/quantize bits=8``, ``data_parallel/none`` (``none bf16`` for a 16-bit wire);
- ``demo/<transport>``: ``demo/dct_topk k=32`` (k = compressor.dct_topk.topk, which DeMo calls
  strategy.demo.compression_topk; logs written before the two were one key hold the latter), with
  ``chunk=``, ``wire=``, the pipeline (``stale``, ``psyche``) when not at their defaults; another
  transport shows its own parameters (``demo/topk ratio=0.01``);
- ``diloco H=<inner_steps>/<compressor>``, with ``F=`` (streaming fragments), ``tau=`` and
  ``alpha=`` when not at their defaults: ``diloco H=50 F=2/none bf16``;
- ``desloc Kx=<param_period> Ku=<first_moment_period> Kv=<second_moment_period>/<compressor>``;
- ``noloco H=<inner_steps>/none``, with ``pull=`` when it differs from the outer lr;
- ``onebit_adam freeze=<freeze_step>/none`` (1-bit Adam), with ``beta2=`` when not 0.999;
- ``zero_one_adam freeze=<var_freeze_step> local<=<local_step_clipper>/none`` (0/1 Adam).

signSGD and Signum with majority vote are ``data_parallel sgd/majority_vote`` (``momentum=``
when set).

A local optimizer other than the default AdamW follows the strategy's part, for every strategy
that has one (all but demo): ``data_parallel muon/none``, ``diloco H=30 muon/topk ratio=0.1``.

Compressor keys printed only when not at their default: ``no-EF``/``EF`` (error feedback),
``beta=`` (its decay), value types other than fp32. SparseLoCo is ``diloco H=30/sparseloco
beta=0.95`` (with ``topk=`` and ``bins=`` when set).

**Method names.** A run launched from an experiment file carries its ``[[sweep.method]]`` name
(the log's attribute ``method``, format version 2, or the config key ``experiment.method``): a
name the study's author chose, which the report prints instead of the label above
(``names=True``, the default; ``--labels keys`` keeps the labels from the keys). A run without a
name keeps its label from the keys.

Then, among runs whose labels (or names) are equal, any other configuration key whose values
differ is appended as ``key=value`` (last segment of the key), so that, say, two learning rates
are two methods, and two methods that an author gave one name are still two. Keys that never make
a method: seeds, ``network.*`` (a scenario is a column of its own), ``experiment.*`` (the name,
which is not a setting: two names for one configuration are told apart by the name itself in
name labels, and are one method in labels from the keys), and bookkeeping (``train.steps``,
``train.eval_every``, ``train.checkpoint_every``, ``train.progress_every``, ``data.dir``). A
differing world size appends ``W=<ranks>``. ``--method-key KEY`` appends ``KEY``'s value to every
label whatever the other runs hold (a key given twice, or also named by ``--best-of``, is appended
once).
"""

from __future__ import annotations

from collections import defaultdict

# Defaults of the secondary parameters (docs/strategies.md, docs/plugins.md); a parameter at its
# default is left out of the label.
_COMPRESSOR_MAIN = {
    "topk": ["ratio"],
    "randomk": ["ratio"],
    "powersgd": ["rank"],
    "quantize": ["bits"],
    "dct_topk": ["topk", "chunk"],
    "sparseloco": ["topk", "bins"],
    "majority_vote": ["momentum"],
}
_ERROR_FEEDBACK_DEFAULT = {"topk": True, "randomk": True, "powersgd": True, "quantize": False,
                           "dct_topk": False, "none": False, "sparseloco": True, "majority_vote": False}

_NEVER_METHOD = ("train.steps", "train.eval_every", "train.checkpoint_every",
                 "train.progress_every", "data.dir", "data.train", "data.val", "schedule.total_steps")


def config_value(config: dict, key: str, default=None):
    """The value of a dotted key (``schedule.lr``) in a resolved config, or `default`."""
    node = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def format_value(value) -> str:
    """A setting's value as labels print it: ``0.001``, ``true``, ``bf16``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _exchange_parts(config: dict, name: str) -> list:
    """A merged exchange (compressor.<name>.exchange = "tree") and its tree's groups, where set."""
    exchange = config.get("compressor", {}).get(name, {}).get("exchange")
    if exchange in (None, "gather", "all_reduce"):
        return []
    parts = [f"exchange={exchange}"]
    groups = config_value(config, "compressor.merge_groups", "none")
    if groups != "none":
        parts.append(f"merge_groups={groups}")
    return parts


def _compressor_part(config: dict, name: str) -> str:
    params = config.get("compressor", {}).get(name, {})
    parts = [name]
    if name == "dct_topk":
        parts.append(f"k={format_value(params.get('topk', 32))}")
        if params.get("chunk", 64) != 64:
            parts.append(f"chunk={format_value(params['chunk'])}")
    else:
        for key in _COMPRESSOR_MAIN.get(name, []):
            if key in params:
                parts.append(f"{key}={format_value(params[key])}")
    value_type = params.get("value_type")
    if value_type not in (None, "fp32"):
        parts.append(str(value_type))
    if "error_feedback" in params and name in _ERROR_FEEDBACK_DEFAULT:
        if bool(params["error_feedback"]) != _ERROR_FEEDBACK_DEFAULT[name]:
            parts.append("EF" if params["error_feedback"] else "no-EF")
    if name == "powersgd" and params.get("start_step", 0):
        parts.append(f"start={format_value(params['start_step'])}")
    if params.get("error_feedback_decay", 1.0) != 1.0:
        parts.append(f"beta={format_value(params['error_feedback_decay'])}")
    parts += _exchange_parts(config, name)
    return " ".join(parts)


def method_label(config: dict, attrs: dict | None = None) -> str:
    """The base label of one run (before disambiguation): the log's own (attribute ``label``,
    which `lowcomm train` writes from each component's registration), else derived from its
    resolved config as below (logs written before there was one)."""
    attrs = attrs or {}
    written = attrs.get("label")
    if isinstance(written, str) and written.strip():
        return written.strip()
    strategy = config_value(config, "strategy.name", attrs.get("strategy", "unknown"))
    compressor = config_value(config, "compressor.name", attrs.get("compressor", "none"))
    if strategy == "demo":
        demo = config.get("strategy", {}).get("demo", {})
        dct = config.get("compressor", {}).get("dct_topk", {})

        def transport_setting(own, reference, default):  # one setting, under either name
            return dct.get(own, demo.get(reference, default))

        transport = demo.get("transport", "dct_topk")
        if transport == "dct_topk":
            parts = [f"dct_topk k={format_value(transport_setting('topk', 'compression_topk', 32))}"]
            chunk = transport_setting("chunk", "compression_chunk", 64)
            if chunk != 64:
                parts.append(f"chunk={format_value(chunk)}")
        else:
            parts = [_compressor_part(config, transport)]
        wire = transport_setting("wire", "wire", "reference")
        if wire != "reference":
            parts.append(f"wire={wire}")
        if transport == "dct_topk":
            parts += _exchange_parts(config, "dct_topk")
        # Logs written before strategy.demo.pipeline hold strategy.demo.stale = true.
        pipeline = demo.get("pipeline", "stale" if demo.get("stale", False) else "none")
        if pipeline != "none":
            parts.append(pipeline)  # "stale" or "psyche"
        if demo.get("compression_decay", 0.999) != 0.999:
            parts.append(f"beta={format_value(demo['compression_decay'])}")
        return "demo/" + " ".join(parts)
    optimizer = config_value(config, "optimizer.name", attrs.get("optimizer", "adamw"))
    head = [strategy]
    if strategy == "diloco":
        d = config.get("strategy", {}).get("diloco", {})
        head = [f"diloco H={format_value(d.get('inner_steps', 500))}"]
        if d.get("fragments", 1) != 1:
            head.append(f"F={format_value(d['fragments'])}")
        if d.get("overlap_steps", 0) != 0:
            head.append(f"tau={format_value(d['overlap_steps'])}")
        if d.get("alpha", 1.0) != 1.0:
            head.append(f"alpha={format_value(d['alpha'])}")
    elif strategy == "desloc":
        d = config.get("strategy", {}).get("desloc", {})
        head = [f"desloc Kx={format_value(d.get('param_period', 16))} "
                f"Ku={format_value(d.get('first_moment_period', 48))} "
                f"Kv={format_value(d.get('second_moment_period', 96))}"]
    elif strategy == "noloco":
        d = config.get("strategy", {}).get("noloco", {})
        head = [f"noloco H={format_value(d.get('inner_steps', 50))}"]
        if d.get("pull", 0.7) != d.get("outer_lr", 0.7):
            head.append(f"pull={format_value(d['pull'] if 'pull' in d else 0.7)}")
    elif strategy == "zero_one_adam":
        d = config.get("strategy", {}).get("zero_one_adam", {})
        head = [f"zero_one_adam freeze={format_value(d.get('var_freeze_step', 100000))} "
                f"local<={format_value(d.get('local_step_clipper', 16))}"]
        optimizer = "adamw"  # its own Adam: the optimizer.* keys are not used
    elif strategy == "onebit_adam":
        d = config.get("strategy", {}).get("onebit_adam", {})
        head = [f"onebit_adam freeze={format_value(d.get('freeze_step', 100000))}"]
        if d.get("beta2", 0.999) != 0.999:
            head.append(f"beta2={format_value(d['beta2'])}")
        optimizer = "adamw"  # its own Adam: the optimizer.* keys are not used
    if optimizer != "adamw":
        head.append(optimizer)
    return " ".join(head) + "/" + _compressor_part(config, compressor)


def _flatten(config: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in config.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, full + "."))
        else:
            out[full] = value
    return out


def _setting_part(key: str, value) -> str:
    """' lr=0.001': what a key's value adds to a label (the key's last segment)."""
    return f" {key.rsplit('.', 1)[-1]}={format_value(value)}"


def never_splits_methods(key: str) -> bool:
    """Keys that never make two methods: seeds, the network (a column of its own), the
    experiment's bookkeeping (``experiment.method``, a name, not a setting) and bookkeeping."""
    return (key.rsplit(".", 1)[-1] == "seed" or key.startswith(("network.", "experiment."))
            or key in _NEVER_METHOD)


def method_name(config: dict, attrs: dict | None = None) -> str | None:
    """The run's method name from its experiment file: the log's attribute ``method`` (format
    version 2), else the config's ``experiment.method``; None for a run started otherwise (the
    key's default is the empty string)."""
    for value in ((attrs or {}).get("method"), config_value(config, "experiment.method")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def method_settings(config: dict) -> dict:
    """Every setting of a resolved config that can tell methods apart, flattened to dotted
    keys: two runs of one method (other seed, other network) have equal method settings."""
    return {key: value for key, value in _flatten(config).items()
            if not never_splits_methods(key)}


def _base_label(run, names: bool) -> str:
    """The run's method name where it has one and names are wanted, else its label from keys."""
    name = method_name(run.config, run.attrs) if names else None
    return name if name is not None else method_label(run.config, run.attrs)


def method_labels(runs, method_keys=(), names: bool = True) -> list[str]:
    """The label of every run, in order (see the module's documentation); runs need
    ``config``, ``attrs`` and ``world_size``. A key given twice in `method_keys` counts once.
    With `names`, a run's method name (``method_name``) replaces its label from the keys; the
    keys still tell apart runs that share a name, as they tell apart runs that share a label."""
    method_keys = list(dict.fromkeys(method_keys))
    base = [_base_label(run, names) for run in runs]
    for key in method_keys:
        for i, run in enumerate(runs):
            base[i] += _setting_part(key, config_value(run.config, key, "-"))
    groups = defaultdict(list)
    for i, label in enumerate(base):
        groups[label].append(i)
    labels = list(base)
    for label, members in groups.items():
        if len(members) < 2:
            continue
        flat = [_flatten(runs[i].config) for i in members]
        for key in sorted(set().union(*flat)):
            if never_splits_methods(key) or key in method_keys:
                continue
            values = [f.get(key) for f in flat]
            if len({repr(v) for v in values}) > 1:
                for i, value in zip(members, values):
                    labels[i] += _setting_part(key, value)
        if len({runs[i].world_size for i in members}) > 1:
            for i in members:
                labels[i] += f" W={runs[i].world_size}"
    return labels


def assign_labels(runs, method_keys=(), names: bool = True) -> None:
    """Sets ``run.label`` for every run (see the module's documentation), and
    ``run.key_label``, its label from the keys alone, by which ``--baseline`` also finds a
    method that a name labels."""
    key_labels = method_labels(runs, method_keys, names=False)
    labels = method_labels(runs, method_keys, names=names) if names else key_labels
    for run, label, key_label in zip(runs, labels, key_labels):
        run.label = label
        run.key_label = key_label
