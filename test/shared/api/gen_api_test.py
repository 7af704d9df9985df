"""tools/gen-api.py refuses a definition it cannot implement faithfully, and
--check notices an output that differs from what it would write.

Run by ctest (api_generator): python3 -m unittest -v gen_api_test
"""

import copy
import importlib.util
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
spec = importlib.util.spec_from_file_location("gen_api", os.path.join(ROOT, "tools", "gen-api.py"))
gen_api = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_api)
from apigen import crd, cpp, model  # noqa: E402  (gen-api.py put tools/ on the path)
from apigen.kinds import DefinitionError  # noqa: E402


def definition():
    with open(os.path.join(ROOT, gen_api.DEFINITION), encoding="utf-8") as f:
        return json.load(f)


def spec_field(d, *path):
    node = d["properties"]["spec"]
    for key in path:
        node = node["properties"][key]
    return node


class Refusals(unittest.TestCase):
    def refused(self, d, words):
        with self.assertRaises(DefinitionError) as e:
            m = model.Model(d)
            crd.check(m.schema)
            cpp.spec_source(m, cpp.Target())
        self.assertIn(words, str(e.exception))

    def test_a_keyword_the_parser_does_not_enforce(self):
        d = definition()
        spec_field(d, "replicas")["multipleOf"] = 2
        self.refused(d, "multipleOf")

    def test_bounds_only_where_the_parser_enforces_them(self):
        # maxItems on an array and maxProperties on a map are enforced (and
        # every list and map of the definition has one); on a struct or a
        # scalar they are refused.
        d = definition()
        self.assertEqual(spec_field(d, "podLabels")["maxProperties"], 64)
        self.assertEqual(spec_field(d, "env")["maxItems"], 256)
        model.Model(d)
        d = definition()
        spec_field(d, "strategy")["maxProperties"] = 2
        self.refused(d, "maxProperties")
        d = definition()
        spec_field(d, "replicas")["maxItems"] = 2
        self.refused(d, "maxItems")

    def test_every_list_and_map_of_the_definition_is_bounded(self):
        unbounded = []

        def walk(node, path):
            if not isinstance(node, dict):
                return
            if node.get("type") == "array" and "maxItems" not in node:
                unbounded.append(path)
            if isinstance(node.get("additionalProperties"), dict) and "maxProperties" not in node:
                unbounded.append(path)
            for k, v in node.get("properties", {}).items():
                walk(v, path + "." + k)
            for k in ("items", "additionalProperties"):
                walk(node.get(k), path + "[]")
        walk(definition(), "")
        self.assertEqual(unbounded, [])

    def test_a_pattern_without_the_format_that_implements_it(self):
        d = definition()
        del spec_field(d, "model")["x-ms-format"]
        self.refused(d, "x-ms-format")
        d = definition()
        spec_field(d, "model")["pattern"] = "^[a-z]+$"
        self.refused(d, "does not implement the pattern")

    def test_an_int_or_string_without_a_format(self):
        d = definition()
        del spec_field(d, "strategy", "rollingUpdate", "maxSurge")["x-ms-format"]
        self.refused(d, "intOrPercent, quantity or port")

    def test_a_default_keyword_or_a_field_without_description(self):
        d = definition()
        spec_field(d, "port")["default"] = 8080
        self.refused(d, "keyword(s) default are not enforced")
        d = definition()
        d["properties"]["status"]["properties"]["replicas"]["default"] = 0
        self.refused(d, "must not contain `default:`")
        d = definition()
        del spec_field(d, "gpus")["description"]
        self.refused(d, "missing: openAPIV3Schema.spec.gpus")

    def test_a_conditional_default_on_a_later_or_missing_field(self):
        d = definition()
        spec_field(d, "strategy", "rollingUpdate")["x-ms-default-if"] = {"colour": "red"}
        self.refused(d, "x-ms-default-if names 'colour'")

    def test_defaults_the_patch_cannot_write_in_the_definitions_order(self):
        # The patch adds defaults in declaration order, which must be the
        # definition's (FieldRank): a default declared before a field that
        # ranks earlier would be written out of order.
        d = definition()
        props = spec_field(d)["properties"]
        spec_field(d)["properties"] = dict([("gpus", props["gpus"])] + [(k, v) for k, v in props.items() if k != "gpus"])
        spec_field(d, "rollout")["properties"]["gpus"] = {"type": "integer", "description": "G.", "x-ms-default": 1}
        self.refused(d, "spec.rollout: the fields with defaults are not in the definition's order")
        d = definition()
        spec_field(d)["properties"]["pools"] = {
            "type": "object", "description": "Pools.", "additionalProperties": {
                "type": "object", "description": "One.", "x-ms-cpp-type": "Pool",
                "properties": {"size": {"type": "integer", "description": "S.", "x-ms-default": 1}}}}
        self.refused(d, "spec.pools: defaults inside a map's values are not patched yet")

    def test_a_struct_of_an_array_without_a_cpp_name(self):
        d = definition()
        spec_field(d)["properties"]["env"] = {"type": "array", "description": "Variables.", "items": {
            "type": "object", "description": "One.", "properties": {"name": {"type": "string", "description": "N."}}}}
        self.refused(d, "need an x-ms-cpp-type")

    def test_two_schemas_under_one_cpp_name(self):
        d = definition()
        selector = spec_field(d, "affinity", "podAffinity")["properties"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["items"]["properties"]["namespaceSelector"]
        selector["properties"]["matchLabels"]["maxProperties"] = 3
        self.refused(d, "x-ms-cpp-type LabelSelector names another schema already")

    def test_one_schema_in_several_places_is_one_struct(self):
        m = model.Model(definition())
        self.assertEqual([s.name for s in m.structs].count("LabelSelector"), 1)
        term = next(s for s in m.structs if s.name == "PodAffinityTerm")
        kinds = {f.key: f.kind.nested for f in term.fields if f.kind.nested is not None}
        self.assertIs(kinds["labelSelector"], kinds["namespaceSelector"])


class Outputs(unittest.TestCase):
    def test_strip_removes_every_annotation_and_nothing_else(self):
        d = definition()
        stripped = model.strip(d)
        self.assertNotIn("x-ms-", json.dumps(stripped))
        self.assertEqual(spec_field(stripped, "replicas"), {k: v for k, v in spec_field(d, "replicas").items()
                                                            if not k.startswith("x-ms-")})
        self.assertEqual(list(stripped["properties"]), ["apiVersion", "kind", "metadata", "spec", "status"])

    def test_a_field_named_like_a_cpp_keyword_gets_a_member_that_is_not(self):
        m = model.Model(definition())
        toleration = next(s for s in m.structs if s.name == "Toleration")
        members = {f.key: f.member for f in toleration.fields}
        self.assertEqual(members["operator"], "operator_")
        self.assertIn("std::optional<TolerationOperator> operator_;  // operator", cpp.spec_header(m, cpp.Target()))

    def test_check_notices_a_stale_output(self):
        files = gen_api.outputs(model.Model(definition()), ROOT)
        with tempfile.TemporaryDirectory() as root:
            shutil.copy(os.path.join(ROOT, ".clang-format"), root)
            out = io.StringIO()
            with redirect_stdout(out), redirect_stderr(out):
                gen_api.write(files, root)
                self.assertEqual(gen_api.check(files, root), 0)
                stale = copy.copy(files)
                stale["docs/user/api-reference.md"] += "x"
                self.assertEqual(gen_api.check(stale, root), 1)
            self.assertIn("out of date: docs/user/api-reference.md", out.getvalue())


if __name__ == "__main__":
    unittest.main()
