#!/usr/bin/python3
"""Writes the pd_op catalog: every op Paddle's PIR op generator puts in the pd_op dialect.

Reads Paddle's op YAML (paddle/phi/ops/yaml/ at the commit given with --commit) the way
paddle/fluid/pir/dialect/op_generator/op_gen.py does, and writes two files checked into the repo
(the build never runs this script):

  newir/pd_op_catalog.inc       one op per line inside a C++ raw string (pd_op_catalog.cc
                                reads it when the pd_op dialect registers)
  newir/pd_op_catalog_manifest.txt
                                per source file the number of `- op :` / `- backward_op :`
                                lines a plain text scan finds, every YAML entry with the pd_op
                                names it became, and the entries left out with the reason
                                (pd_op_dialect_test.cc checks the registry against it)

Usage: scripts/gen_pd_op_catalog.py --paddle /path/to/Paddle --commit ccd49a3de4 [--date 2025-02-17]

What op_gen.py does, and this script repeats (paths under paddle/fluid/pir/dialect/):
  * the YAML files of the pd_op dialect (CMakeLists.txt, op_yaml_files): ops, backward,
    fused_ops, fused_backward, inconsistent/static_ops, inconsistent/static_backward,
    inconsistent/update_ops, sparse_ops, sparse_backward;
  * an entry with `inplace:` or `view:` becomes two ops, NAME and NAME_ (parse_op_phi_name);
    a name that already ends in `_` stays one op;
  * an entry whose kernel has several functions becomes one op per function, named after it
    (the `len(func_list) > 1` branch);
  * sparse ops take the suffix `_sp` (`sp_` after an in-place `_`): pd_op.abs_sp, pd_op.relu_sp_;
  * mutable attributes (op_compat.yaml `scalar:` / `int_array:` entries with tensor_name,
    tensors_name or support_tensor) become operands after the inputs, in attribute order
    (parse_mutable_attribute; sparse_ops.yaml's scalars never are; pow's never are);
  * PD_MANUAL_OP_LIST ops (add_n_, split_grad, expand, increment, increment_, assign_out_) are
    written by hand in Paddle (operator/ir/manual_op.cc) with the YAML's signature: kept here;
  * add_n_grad is skipped (`if key == "add_n_grad": continue`): left out, with that reason;
  * a sparse op's tensor operands and results have the kinds of its kernel function's dispatch
    (`add_coo_dense{sparse_coo, dense -> sparse_coo}`; parse_input_type_dict and
    parse_output_type_dict), which its generated VerifySig checks: written as a fifth field,
    `coo,dense>coo`.
"""

import argparse
import ast
import os
import re
import sys

import yaml

# (file under paddle/phi/ops/yaml, category of its ops, sparse)
SOURCES = [
    ("ops.yaml", "forward", False),
    ("backward.yaml", "backward", False),
    ("fused_ops.yaml", "fused", False),
    ("fused_backward.yaml", "fused", False),
    ("inconsistent/static_ops.yaml", "forward", False),
    ("inconsistent/static_backward.yaml", "backward", False),
    ("inconsistent/update_ops.yaml", "forward", False),
    ("sparse_ops.yaml", "sparse", True),
    ("sparse_backward.yaml", "sparse", True),
]
CATEGORY_CODE = {"forward": "F", "backward": "B", "fused": "U", "sparse": "S", "inplace": "I"}
SKIPPED = {"add_n_grad": "op_gen.py skips it (`if key == \"add_n_grad\": continue`) and "
                         "manual_op.cc defines no such op"}

ATTR_KIND = {
    "bool": "b", "int": "i32", "int32_t": "i32", "int64_t": "i64", "long": "i64",
    "size_t": "i64", "float": "f32", "double": "f64", "str": "str",
    "DataType": "dt", "Place": "pl", "DataLayout": "lo", "IntArray": "ia",
    "Scalar": "sf64", "Scalar(int)": "si32", "Scalar(int64_t)": "si64",
    "Scalar(float)": "sf32", "Scalar(double)": "sf64",
    "int[]": "ai32", "int64_t[]": "ai64", "float[]": "af32", "double[]": "af64",
    "bool[]": "ab", "str[]": "astr", "Scalar[]": "asc",
}

SPLIT_ARGS = re.compile(r",(?![^{]*\})")  # commas outside `{…}` (parse_utils.parse_plain_list)


def split_list(text):
    return [x.strip() for x in SPLIT_ARGS.split(text.strip()) if x.strip()]


def number(text, integral):
    """A C++ numeric default (`1.0f`, `1.0f/3`, `(2 << 12) - 1`, `INT64_MAX`, `true`) as a value;
    None when it is not plain arithmetic."""
    t = text.strip().replace("INT64_MAX", str(2**63 - 1)).replace("INT_MAX", str(2**31 - 1))
    if t in ("true", "false"):
        return int(t == "true") if integral else float(t == "true")
    t = re.sub(r"(?<=[0-9.])[fFlL]\b", "", t)
    t = re.sub(r"(?<=\d)\.(?!\d)", ".0", t)
    t = re.sub(r"(?<![\d.])\.(?=\d)", "0.", t)
    try:
        tree = ast.parse(t, mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult,
               ast.Div, ast.LShift, ast.USub, ast.UAdd)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return None
    value = eval(compile(tree, "<default>", "eval"), {"__builtins__": {}})  # checked above
    return int(value) if integral else float(value)


def fmt_float(v):
    r = repr(float(v))
    return r[:-2] if r.endswith(".0") else r


def braces_items(text):
    t = text.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    inner = t[1:-1].strip()
    return [x.strip() for x in inner.split(",")] if inner else []


def default_text(kind, text):
    """The default in the untyped text form the catalog reader parses with the attribute's kind;
    None when the YAML's C++ expression has no such form."""
    t = text.strip()
    if kind == "b":
        return t if t in ("true", "false") else None
    if kind in ("i32", "i64", "si32", "si64"):
        v = number(t, True)
        return None if v is None else str(v)
    if kind in ("f32", "f64", "sf32", "sf64"):
        v = number(t, False)
        return None if v is None else fmt_float(v)
    if kind == "str":
        return t if t.startswith('"') and t.endswith('"') and "\\" not in t else None
    if kind == "dt":
        m = re.fullmatch(r"(?:phi::)?DataType::(\w+)", t)
        if not m:
            return None
        name = m.group(1).lower()
        return "Undefined" if name == "undefined" else name
    if kind == "pl":
        if t == "{}":
            return "Place(undefined:0)"
        return "Place(cpu)" if t in ("CPUPlace()", "phi::CPUPlace()") else None
    if kind == "lo":
        m = re.fullmatch(r'(?:DataLayout::k?)?"?(\w+)"?', t)
        return m.group(1) if m else None
    if kind == "ia" or kind.startswith("a"):
        items = braces_items(t)
        if items is None:
            v = number(t, True) if kind == "ia" else None
            return None if v is None else f"[{v}]"
        if kind in ("ia", "ai32", "ai64"):
            vals = [number(x, True) for x in items]
        elif kind in ("af32", "af64"):
            vals = [number(x, False) for x in items]
            vals = None if None in vals else [fmt_float(v) for v in vals]
        elif kind == "ab":
            vals = items if all(x in ("true", "false") for x in items) else None
        elif kind == "astr":
            vals = items if all(x.startswith('"') and x.endswith('"') for x in items) else None
        else:
            vals = None if items else []
        if vals is None or None in vals:
            return None
        return "[" + ",".join(str(v) for v in vals) + "]"
    return None


class Compat:
    """op_compat.yaml lookups as op_gen.py's OpCompatParser.get_compat does them."""

    def __init__(self, path):
        with open(path) as f:
            self.entries = yaml.safe_load(f)

    @staticmethod
    def phi(name):
        return name.split("(")[0].strip()

    def get(self, op_name):
        for entry in self.entries:
            if op_name == self.phi(entry["op"]):
                return entry
            if "backward" in entry:
                if any(op_name == self.phi(n) for n in entry["backward"].split(", ")):
                    return entry
        return None


def mutable_attrs(op, compat_entry, attr_names, sparse_file):
    """Names of the attributes PIR turns into operands, with 'ia' or 's' (scalar)."""
    if compat_entry is None or op_name_of(op) in ("pow", "pow_grad", "pow_double_grad",
                                                   "pow_triple_grad"):
        return {}
    found = {}
    if "scalar" in compat_entry and not sparse_file:
        for name, spec in compat_entry["scalar"].items():
            if isinstance(spec, dict) and ("tensor_name" in spec or "tensors_name" in spec or
                                           spec.get("support_tensor") is True):
                if name == "depth" and op_name_of(op) == "one_hot":
                    name = "num_classes"
                found[name] = "s"
    if "int_array" in compat_entry:
        for name, spec in compat_entry["int_array"].items():
            if isinstance(spec, dict) and ("tensor_name" in spec or "tensors_name" in spec or
                                           spec.get("support_tensor") is True):
                found[name] = "ia"
    return {k: v for k, v in found.items() if k in attr_names}


def op_name_of(op):
    return op.get("op") or op.get("backward_op")


def kernel_funcs(op):
    kernel = op.get("kernel")
    if not kernel or "func" not in kernel:
        return [None]
    funcs = re.findall(r"([a-zA-Z0-9_]+)\s*(?:\{[^}]+\})?", str(kernel["func"]))
    return funcs if len(funcs) > 1 else [None]


DISPATCH_KIND = {"dense": "dense", "sparse_coo": "coo", "sparse_csr": "csr"}


def dispatch_kinds(op, func, inputs, results, where):
    """The fifth catalog field of a sparse op from kernel function `func` (None: the only one).

    None for an entry without a kernel (divide_scalar_grad and scale_grad, which `invoke` another
    op): op_gen.py's sparse invoke support is unfinished (a TODO), so their kinds are not taken
    from it and stay unchecked."""
    if "kernel" not in op:
        return None
    text = str(op["kernel"]["func"])
    found = {name: body for name, body in
             re.findall(r"([a-zA-Z0-9_]+)\s*\{([^}]+)\}", text)}
    body = found[func] if func is not None else next(iter(found.values()))
    ins, outs = (split_list(x) for x in body.split("->"))
    if len(ins) != len(inputs) or len(outs) != len(results):
        raise ValueError(f"{where}: {op_name_of(op)}: dispatch {body} does not match the args")
    return ",".join(DISPATCH_KIND[k] for k in ins) + ">" + ",".join(DISPATCH_KIND[k] for k in outs)


def signature(op, compat, sparse_file, where):
    name = op_name_of(op)
    args = op["args"].strip()
    if not (args.startswith("(") and args.endswith(")")):
        raise ValueError(f"{where}: {name}: args not in parentheses")
    optional = set(split_list(op.get("optional", "") or ""))
    inputs, attrs = [], []
    for arg in split_list(args[1:-1]):
        typename, rest = arg.split(" ", 1)
        if "=" in rest:
            arg_name, default = (x.strip() for x in rest.split("=", 1))
        else:
            arg_name, default = rest.strip(), None
        if typename in ("Tensor", "Tensor[]"):
            inputs.append(arg_name + ("?" if arg_name in optional else "") +
                          ("[]" if typename == "Tensor[]" else ""))
        elif typename in ATTR_KIND:
            attrs.append((arg_name, ATTR_KIND[typename], default))
        else:
            raise ValueError(f"{where}: {name}: unknown argument type {typename}")
    compat_entry = compat.get(name)
    if compat_entry is None and name.endswith(("_grad", "_grad_")) and "forward" in op:
        compat_entry = compat.get(op["forward"].split("(")[0].strip())
    mutable = mutable_attrs(op, compat_entry, {a[0] for a in attrs}, sparse_file)
    operands = list(inputs)
    attr_fields = []
    for arg_name, kind, default in attrs:
        if arg_name in mutable:
            operands.append(arg_name + ("#" if mutable[arg_name] == "ia" else "$"))
            continue
        if default is None:
            attr_fields.append(f"{arg_name}:{kind}")
        else:
            text = default_text(kind, default)
            attr_fields.append(f"{arg_name}:{kind}=" + (text if text is not None else "?"))
    results = []
    for out in split_list(op.get("output", "") or ""):
        m = re.match(r"\s*(Tensor(?:\[\])?)\s*(?:\(([A-Za-z0-9_@]+)\))?", out)
        if not m:
            raise ValueError(f"{where}: {name}: bad output {out}")
        out_name = m.group(2) or "out"
        results.append(out_name + ("?" if out_name in optional else "") +
                       ("[]" if m.group(1) == "Tensor[]" else ""))
    side_effect = "pir::SideEffectTrait" in str(op.get("traits", ""))
    for what, items in (("operand", operands), ("result", results), ("attribute", attr_fields)):
        bare = [re.match(r"[A-Za-z0-9_@]+", x).group(0) for x in items]
        if len(set(bare)) != len(bare):
            raise ValueError(f"{where}: {name}: a {what} name repeats: {bare}")
    return operands, results, attr_fields, side_effect


def pd_op_names(op, sparse_file):
    """The pd_op names op_gen.py gives the entry (without the `pd_op.` prefix)."""
    name = op_name_of(op)
    has_variant = ("inplace" in op or "view" in op) and not name.endswith("_")
    phi_names = [name, name + "_"] if has_variant else [name]
    names = []
    for phi_name in phi_names:
        inplace = phi_name.endswith("_")
        for func in kernel_funcs(op):
            base = phi_name if func is None else func + ("_" if inplace else "")
            if sparse_file:
                base += "sp_" if inplace else "_sp"
            names.append((base, inplace, func))
    return names


def scan_count(path):
    pattern = re.compile(r"^- (op|backward_op) *:")
    with open(path) as f:
        return sum(1 for line in f if pattern.match(line))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paddle", required=True, help="Paddle source tree")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--date", default="")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "newir"))
    args = parser.parse_args()
    yaml_dir = os.path.join(args.paddle, "paddle", "phi", "ops", "yaml")
    compat = Compat(os.path.join(yaml_dir, "op_compat.yaml"))

    lines, manifest, seen = [], [], {}
    counts = {c: 0 for c in CATEGORY_CODE}
    for rel, category, sparse in SOURCES:
        path = os.path.join(yaml_dir, rel)
        manifest.append(f"source {rel} {scan_count(path)}")
        with open(path) as f:
            entries = yaml.safe_load(f)
        for op in entries:
            name = op_name_of(op)
            if name in SKIPPED:
                manifest.append(f"omit {rel} {name} {category} {SKIPPED[name]}")
                continue
            operands, results, attrs, side_effect = signature(op, compat, sparse, rel)
            names = pd_op_names(op, sparse)
            for pd_name, inplace, func in names:
                if pd_name in seen:
                    raise ValueError(f"{rel}: pd_op.{pd_name} also comes from {seen[pd_name]}")
                seen[pd_name] = rel
                cat = "inplace" if inplace else category
                counts[cat] += 1
                flags = CATEGORY_CODE[cat] + ("E" if side_effect else "")
                line = (f"{flags} {pd_name}|{','.join(operands)}|{','.join(results)}|"
                        f"{';'.join(attrs)}")
                tensors = [x for x in operands if not x.endswith(("#", "$"))]
                kinds = dispatch_kinds(op, func, tensors, results, rel) if sparse else None
                if kinds is not None:
                    line += "|" + kinds
                lines.append(line)
            manifest.append(f"entry {rel} {name} {category} " +
                            ",".join(n for n, _, _ in names))

    header = (f"PaddlePaddle commit {args.commit}" + (f" ({args.date})" if args.date else "") +
              ", paddle/phi/ops/yaml/")
    with open(os.path.join(args.out, "pd_op_catalog.inc"), "w") as f:
        f.write("// Generated by scripts/gen_pd_op_catalog.py (do not edit) from\n// " + header + "\n"
                "// Regenerate: scripts/gen_pd_op_catalog.py --paddle <Paddle tree> --commit "
                f"{args.commit}\n"
                "// Line: FLAGS NAME|OPERANDS|RESULTS|ATTRIBUTES[|KINDS] (format: pd_op_catalog.h).\n"
                f"// Ops: {len(lines)}; " +
                ", ".join(f"{c} {n}" for c, n in counts.items()) + ".\n"
                "R\"catalog(\n"
                f"# {header}\n")
        for line in sorted(lines, key=lambda l: l.split("|", 1)[0].split(" ")[1]):
            f.write(line + "\n")
        f.write(")catalog\"\n")
    with open(os.path.join(args.out, "pd_op_catalog_manifest.txt"), "w") as f:
        f.write("# pd_op catalog manifest, generated by scripts/gen_pd_op_catalog.py from " +
                header + ".\n"
                "# source FILE N: N lines matching ^- (op|backward_op) *: in FILE (a text scan).\n"
                "# entry FILE YAML_NAME CATEGORY PD_OP_NAMES: one per YAML entry.\n"
                "# omit FILE YAML_NAME CATEGORY REASON: an entry that is no pd_op op.\n"
                "# count CATEGORY N: pd_op ops per category (in-place variants are 'inplace').\n")
        for line in manifest:
            f.write(line + "\n")
        for c, n in counts.items():
            f.write(f"count {c} {n}\n")
    print(f"{len(lines)} ops: " + ", ".join(f"{c} {n}" for c, n in counts.items()),
          file=sys.stderr)


if __name__ == "__main__":
    main()
