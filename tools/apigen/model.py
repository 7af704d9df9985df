"""The definition read into a model: the resource's names, the structs of the
spec with their fields, and the named values of the status.

The definition is the CRD's openAPIV3Schema plus annotations, all named
`x-ms-*` and all removed from what the API server and valijson see
(`stripped`):

  x-ms-api          (root) group, version, kind, names, finalizer,
                    subresources and printer columns of the CRD
  x-ms-default      the value the mutating webhook defaults a field to (an
                    object field: {} adds the object, then its defaults);
                    inside an array's items it reaches the typed spec only
                    (the patch adds or leaves an array whole)
  x-ms-default-if   {"sibling": "value"}: the object is added and defaulted
                    only when that sibling (defaulted) has that value
  x-ms-default-doc  how the reference shows a default that depends on other
                    fields (the dependency itself is C++, spec.cc)
  x-ms-format       a named check that implements `pattern` (kinds.py), or
                    intOrPercent / quantity / port for an int-or-string
  x-ms-cpp-type     the C++ name of an enum or struct when the derived one
                    does not fit (required for the items of an array of
                    objects and the values of a map of objects); several
                    objects may name the same struct when they are the same
                    schema but for their own description (a LabelSelector
                    in two places is one C++ type)
  x-ms-constants    (status) emit C++ constants k<prefix><Value> for the
                    field's enum or x-ms-values
  x-ms-values       (status) the documented values of a string field:
                    [{value, description, conditions?, status?, passthrough?}]
"""

import copy
import re

from . import kinds
from .kinds import DefinitionError


def strip(node):
    """The schema without the x-ms-* annotations (property names are kept)."""
    if isinstance(node, list):
        return [strip(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key.startswith("x-ms-"):
            continue
        out[key] = {k: strip(v) for k, v in value.items()} if key == "properties" else strip(value)
    return out


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


# C++ keywords a field name may snake-case into (tolerations[].operator): the
# member gets a trailing underscore.
CPP_KEYWORDS = {"operator", "default", "delete", "new", "class", "template", "namespace", "private", "public",
                "protected", "register", "static", "union", "virtual", "volatile", "export", "explicit", "friend",
                "inline", "mutable", "typename", "using", "auto", "bool", "break", "case", "catch", "char", "const",
                "continue", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if", "int", "long",
                "return", "short", "signed", "sizeof", "struct", "switch", "this", "throw", "try", "typedef",
                "unsigned", "void", "while", "and", "or", "not", "xor", "concept", "requires"}


def member_name(key):
    m = snake(key)
    return m + "_" if m in CPP_KEYWORDS else m


def camel(name):
    return name[0].upper() + name[1:]


class Field:
    def __init__(self, key, node, kind, required, struct):
        self.key, self.node, self.kind, self.required, self.struct = key, node, kind, required, struct
        self.member = member_name(key)
        self.path = struct.path + "." + key
        self.rule_name = "k" + camel(key)
        self.default = node.get("x-ms-default")
        self.default_if = node.get("x-ms-default-if")
        self.description = node.get("description", "")
        if self.default is not None and kind.nested is not None and self.default != {}:
            raise DefinitionError("%s: the default of an object can only be {} (add it)" % self.path)
        if self.default_if is not None and kind.nested is None:
            raise DefinitionError("%s: x-ms-default-if is for object fields" % self.path)

    def rules(self):
        return self.kind.rules(self.rule_name, None if self.kind.nested else self.default)

    def doc_default(self):
        if "x-ms-default-doc" in self.node:
            return self.node["x-ms-default-doc"]
        if self.default is None:
            return ""
        return "added" if self.kind.nested else kinds.doc_value(self.default)


class Struct:
    def __init__(self, name, path, node):
        self.name, self.path, self.node = name, path, node
        self.fields = []

    def has_defaults(self):
        return any(f.default is not None or f.default_if is not None or
                   (f.kind.nested is not None and f.kind.nested.has_defaults()) for f in self.fields)


class Model:
    def __init__(self, definition):
        self.definition = definition
        self.api = definition.get("x-ms-api")
        if not self.api:
            raise DefinitionError("the definition has no x-ms-api (group, version, kind, ...)")
        self.schema = strip(definition)
        self.structs = []  # every struct of the spec, nested ones before their users
        self._named = {}   # struct name -> (the schema it was made from, the struct)
        self.enums = []    # EnumKind, in definition order
        self.spec = self._struct(self.api["kind"] + "Spec", "spec", definition["properties"]["spec"])
        self.constants = list(self._constants(definition, ""))
        self._check_unique()

    def _struct(self, name, path, node):
        struct = Struct(name, path, node)
        required = set(node.get("required", []))
        unknown = required - set(node["properties"])
        if unknown:
            raise DefinitionError("%s: required names no property: %s" % (path, ", ".join(sorted(unknown))))
        for key, sub in node["properties"].items():
            kind = self._kind(sub, path + "." + key, struct, key)
            struct.fields.append(Field(key, sub, kind, key in required, struct))
        self.structs.append(struct)
        return struct

    def _kind(self, node, path, parent, key):
        t = node.get("type")
        if node.get("x-kubernetes-int-or-string"):
            fmt = node.get("x-ms-format")
            if fmt == "intOrPercent":
                return kinds.IntOrPercentKind(node, path)
            if fmt == "quantity":
                return kinds.QuantityKind(node, path)
            if fmt == "port":
                return kinds.PortKind(node, path)
            raise DefinitionError("%s: an int-or-string needs x-ms-format intOrPercent, quantity or port" % path)
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return kinds.OpaqueKind(node, path)
        if t == "string" and "enum" in node:
            if key is None and "x-ms-cpp-type" not in node:
                raise DefinitionError("%s: the enums of an array or map need an x-ms-cpp-type" % path)
            prefix = "" if parent.path == "spec" else parent.name
            kind = kinds.EnumKind(node, path, node.get("x-ms-cpp-type") or prefix + camel(key))
            self.enums.append(kind)
            return kind
        simple = {"string": kinds.StringKind, "integer": kinds.IntKind, "boolean": kinds.BoolKind}
        if t in simple:
            return simple[t](node, path)
        if t == "object" and "properties" in node:
            if key is None and "x-ms-cpp-type" not in node:
                raise DefinitionError("%s: the objects of an array or map need an x-ms-cpp-type" % path)
            name = node.get("x-ms-cpp-type", camel(key) if key else None)
            return kinds.StructKind(node, path, self._named_struct(name, path, node))
        if t == "object" and isinstance(node.get("additionalProperties"), dict):
            return kinds.MapKind(node, path, self._kind(node["additionalProperties"], path + "[*]", parent, None))
        if t == "array" and isinstance(node.get("items"), dict):
            return kinds.ArrayKind(node, path, self._kind(node["items"], path + "[]", parent, None))
        raise DefinitionError("%s: no kind of field fits this schema (kinds.py)" % path)

    def _named_struct(self, name, path, node):
        """The struct `name`, made once: a second object of that name must be
        the same schema (its own description aside)."""
        shape = {k: v for k, v in node.items() if k != "description"}
        if name in self._named:
            first, struct = self._named[name]
            if first != shape:
                raise DefinitionError("%s: x-ms-cpp-type %s names another schema already (%s)" %
                                      (path, name, struct.path))
            return struct
        struct = self._struct(name, path, node)
        self._named[name] = (shape, struct)
        return struct

    def _constants(self, node, path):
        """(C++ name, value, path) for every field annotated with x-ms-constants."""
        if not isinstance(node, dict):
            return
        prefix = node.get("x-ms-constants")
        if prefix:
            values = node.get("enum") or [v["value"] for v in node.get("x-ms-values", []) if not v.get("passthrough")]
            for v in values:
                yield "k%s%s" % (prefix, v), v, path
        for name, sub in node.get("properties", {}).items():
            yield from self._constants(sub, (path + "." if path else "") + name)
        if isinstance(node.get("items"), dict):
            yield from self._constants(node["items"], path + "[]")

    def _check_unique(self):
        names = [s.name for s in self.structs] + [e.cpp_type for e in self.enums]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise DefinitionError("C++ names used twice: %s (set x-ms-cpp-type)" % ", ".join(sorted(dup)))
        consts = [c[0] for c in self.constants]
        dup = {n for n in consts if consts.count(n) > 1}
        if dup:
            raise DefinitionError("constants defined twice: %s" % ", ".join(sorted(dup)))

    def field_order(self):
        """Field names in definition order, depth first: the root's up to spec, then spec's."""
        order = []
        for name in self.definition["properties"]:
            order.append(name)
            if name == "spec":
                break

        def walk(struct):
            for f in struct.fields:
                if f.key not in order:
                    order.append(f.key)
                if f.kind.nested is not None:
                    walk(f.kind.nested)
        walk(self.spec)
        return order

    def stripped_copy(self):
        return copy.deepcopy(self.schema)
