"""The kinds of spec field the generator knows, one class each.

A kind says, for one field of the definition: its C++ type, the rule the
parser applies (a constexpr value of a type in shared/api/field_rules.h), the
one line of C++ that reads it (FieldReader, shared/api/field_reader.h), how a
default is written in C++, and how the API reference shows it. `KEYWORDS` is
every schema keyword the kind's parser enforces: the generator refuses a
field that uses another one, so the CRD can never state a constraint the
webhook's parser does not check.

Adding a kind: a class here, a branch in `kind_of`, and (when it needs a new
C++ value type or rule) the type and a `ReadValue` overload in
shared/api/field_rules.h and field_reader.{h,cc}.
"""

import json

# Keywords that never constrain a value: documentation and annotations.
NEUTRAL = {"description", "x-ms-default", "x-ms-default-doc", "x-ms-default-if", "x-ms-cpp-type",
           "x-ms-constants", "x-ms-values"}

# Named string formats: (C++ enumerator, the schema pattern it stands for, docs).
STRING_FORMATS = {
    "noWhitespaceOrControl": ("StringFormat::kNoWhitespaceOrControl", "^[^\\s\\x00-\\x1F\\x7F]+$",
                              "no whitespace or control characters"),
}
PERCENT_PATTERN = "^(100|[1-9]?[0-9])%$"
QUANTITY_PATTERN = ("^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    "([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$")


class DefinitionError(Exception):
    pass


def cpp_string(s):
    return json.dumps(s, ensure_ascii=False)


def doc_value(v):
    return "`%s`" % json.dumps(v, ensure_ascii=False)


class Kind:
    KEYWORDS = {"type"}
    nested = None  # the Struct of an object, or of an array's items / a map's values

    def __init__(self, node, path):
        self.node, self.path = node, path
        unknown = set(node) - self.KEYWORDS - NEUTRAL
        if unknown:
            raise DefinitionError("%s: keyword(s) %s are not enforced by the parser of a %s field" %
                                  (path, ", ".join(sorted(unknown)), self.__class__.__name__))

    # The rule's C++ type and initializer, or None for a kind without one.
    def rule(self, default):
        return None

    # The rules a field of this kind declares in its struct: (name, type, initializer).
    def rules(self, name, default):
        r = self.rule(default)
        return [(name, r[0], r[1])] if r else []

    def read(self, key, member, rule_name):
        return "out.%s = r.Read(%s, %s);" % (member, key, rule_name)

    def doc_values(self):
        return ""


class IntKind(Kind):
    KEYWORDS = {"type", "minimum", "maximum"}
    cpp_type = "int64_t"
    doc_type = "integer"

    def rule(self, default):
        parts = [".min = %d" % self.node["minimum"]] if "minimum" in self.node else []
        if "maximum" in self.node:
            parts.append(".max = %d" % self.node["maximum"])
        if default is not None:
            parts.append(".default_value = %d" % default)
        return "IntRule", "{%s}" % ", ".join(parts)

    def doc_values(self):
        lo, hi = self.node.get("minimum"), self.node.get("maximum")
        if lo is not None and hi is not None:
            return "%d to %d" % (lo, hi)
        if lo is not None:
            return "%d or more" % lo
        return "at most %d" % hi if hi is not None else ""


class BoolKind(Kind):
    cpp_type = "bool"
    doc_type = "boolean"

    def rule(self, default):
        return "BoolRule", "{%s}" % ("" if default is None else ".default_value = %s" % str(default).lower())


class StringKind(Kind):
    KEYWORDS = {"type", "minLength", "maxLength", "pattern", "x-ms-format"}
    cpp_type = "std::string"
    doc_type = "string"

    def __init__(self, node, path):
        super().__init__(node, path)
        fmt = node.get("x-ms-format")
        if ("pattern" in node) != (fmt is not None):
            raise DefinitionError("%s: a string pattern needs an x-ms-format (one of %s) that implements it" %
                                  (path, ", ".join(STRING_FORMATS)))
        if fmt is not None and (fmt not in STRING_FORMATS or STRING_FORMATS[fmt][1] != node["pattern"]):
            raise DefinitionError("%s: x-ms-format %r does not implement the pattern %r" % (path, fmt, node["pattern"]))

    def rule(self, default):
        parts = [".min_length = %d" % self.node.get("minLength", 0)]
        if "maxLength" in self.node:
            parts.append(".max_length = %d" % self.node["maxLength"])
        if "x-ms-format" in self.node:
            parts.append(".format = %s" % STRING_FORMATS[self.node["x-ms-format"]][0])
        if default is not None:
            parts.append(".default_value = %s" % cpp_string(default))
        return "StringRule", "{%s}" % ", ".join(parts)

    def doc_values(self):
        lo, hi = self.node.get("minLength", 0), self.node.get("maxLength")
        out = []
        if hi is not None:
            out.append("%d to %d bytes" % (lo, hi) if lo else "at most %d bytes" % hi)
        elif lo:
            out.append("at least %d bytes" % lo)
        if "x-ms-format" in self.node:
            out.append(STRING_FORMATS[self.node["x-ms-format"]][2])
        return "; ".join(out)


class EnumKind(Kind):
    KEYWORDS = {"type", "enum"}
    doc_type = "string"

    def __init__(self, node, path, cpp_type):
        super().__init__(node, path)
        self.cpp_type = cpp_type
        self.values = node["enum"]
        for v in self.values:
            if not isinstance(v, str) or not v.isidentifier():
                raise DefinitionError("%s: enum value %r is not a C++ identifier" % (path, v))

    def enumerator(self, value):
        return "%s::k%s" % (self.cpp_type, value[0].upper() + value[1:])

    def rule(self, default):
        d = "" if default is None else ", %s" % self.enumerator(default)
        return "EnumRule<%s, %d>" % (self.cpp_type, len(self.values)), "{k%sNames%s}" % (self.cpp_type, d)

    def doc_values(self):
        return " | ".join("`%s`" % v for v in self.values)


class IntOrPercentKind(Kind):
    KEYWORDS = {"x-kubernetes-int-or-string", "anyOf", "minimum", "pattern", "x-ms-format"}
    cpp_type = "IntOrPercent"
    doc_type = "integer or string"

    def __init__(self, node, path):
        super().__init__(node, path)
        if node.get("pattern") != PERCENT_PATTERN or node.get("minimum") != 0:
            raise DefinitionError("%s: intOrPercent means minimum 0 and pattern %r" % (path, PERCENT_PATTERN))

    def rule(self, default):
        if default is None:
            return "IntOrPercentRule", "{}"
        if isinstance(default, str):
            value = "IntOrPercent{%d, true}" % int(default.rstrip("%"))
        else:
            value = "IntOrPercent{%d, false}" % default
        return "IntOrPercentRule", "{.default_value = %s}" % value

    def doc_values(self):
        return 'an integer >= 0, or "0%" to "100%"'


class QuantityKind(Kind):
    KEYWORDS = {"x-kubernetes-int-or-string", "anyOf", "pattern", "x-ms-format"}
    cpp_type = "Quantity"
    doc_type = "quantity"

    def __init__(self, node, path):
        super().__init__(node, path)
        if node.get("pattern") != QUANTITY_PATTERN:
            raise DefinitionError("%s: a quantity has the pattern %r" % (path, QUANTITY_PATTERN))

    def rule(self, default):
        if default is not None:
            raise DefinitionError("%s: quantities have no default here" % self.path)
        return "QuantityRule", "{}"

    def doc_values(self):
        return "a Kubernetes quantity, e.g. `500m`, `2`, `8Gi`"


PORT_NAME_PATTERN = "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"


class PortKind(Kind):
    """A container port by number (1 to 65535) or by name (an IANA service
    name, as the Pod API checks a probe's port), e.g. a probe's httpGet.port."""
    KEYWORDS = {"x-kubernetes-int-or-string", "anyOf", "minimum", "maximum", "maxLength", "pattern", "x-ms-format"}
    cpp_type = "PortNumberOrName"
    doc_type = "integer or string"

    def __init__(self, node, path):
        super().__init__(node, path)
        if (node.get("minimum"), node.get("maximum"), node.get("maxLength"), node.get("pattern")) != \
                (1, 65535, 15, PORT_NAME_PATTERN):
            raise DefinitionError("%s: a port means minimum 1, maximum 65535, maxLength 15 and pattern %r" %
                                  (path, PORT_NAME_PATTERN))

    def rule(self, default):
        if default is not None:
            raise DefinitionError("%s: ports have no default here" % self.path)
        return "PortRule", "{}"

    def doc_values(self):
        return "a port number, 1 to 65535, or the name of a container port"


class OpaqueKind(Kind):
    """An object kept as JSON (x-kubernetes-preserve-unknown-fields), e.g. a pod's affinity."""
    KEYWORDS = {"type", "x-kubernetes-preserve-unknown-fields"}
    cpp_type = "nlohmann::json"
    doc_type = "object"

    def rule(self, default):
        return "OpaqueRule", "{}"


class StructKind(Kind):
    KEYWORDS = {"type", "properties", "required"}
    doc_type = "object"

    def __init__(self, node, path, struct):
        super().__init__(node, path)
        self.nested = struct
        self.cpp_type = struct.name

    def read(self, key, member, rule_name):
        return "r.ReadObject(%s, out.%s);" % (key, member)


class _ContainerKind(Kind):
    """An array or a map: its elements are of another kind (a struct, or a
    value kind whose rule the container declares as <name><SUFFIX>)."""
    SUFFIX = READER = None

    def __init__(self, node, path, element, cpp_type, doc_type):
        super().__init__(node, path)
        self.element = element
        self.nested = element.nested
        self.cpp_type = cpp_type % element.cpp_type
        self.doc_type = doc_type + (element.nested.name if element.nested else element.doc_type)

    def own_rule(self):  # (type, initializer) of the container itself, or None
        return None

    def rules(self, name, default):
        if default is not None:
            raise DefinitionError("%s: arrays and maps have no default here" % self.path)
        own = [(name,) + self.own_rule()] if self.own_rule() else []
        return own if self.nested else own + self.element.rules(name + self.SUFFIX, None)

    def read(self, key, member, rule_name):
        args = [key] + ([rule_name] if self.own_rule() else [])
        args += ([] if self.nested else [rule_name + self.SUFFIX]) + ["out." + member]
        return "r.%s(%s);" % (self.READER, ", ".join(args))


class ArrayKind(_ContainerKind):
    # Not x-kubernetes-list-type/-map-keys: the parser does not check that
    # the keys of a list-map are unique.
    KEYWORDS = {"type", "items", "maxItems"}
    SUFFIX, READER = "Items", "ReadList"

    def __init__(self, node, path, item):
        super().__init__(node, path, item, "std::vector<%s>", "array of ")

    def own_rule(self):
        return "ArrayRule", "{%s}" % (".max_items = %d" % self.node["maxItems"] if "maxItems" in self.node else "")

    def doc_values(self):
        return "at most %d items" % self.node["maxItems"] if "maxItems" in self.node else ""


class MapKind(_ContainerKind):
    KEYWORDS = {"type", "additionalProperties", "maxProperties"}
    SUFFIX, READER = "Values", "ReadMap"

    def __init__(self, node, path, value):
        super().__init__(node, path, value, "std::map<std::string, %s>", "map of string to ")

    def own_rule(self):
        return "MapRule", "{%s}" % (".max_properties = %d" % self.node["maxProperties"]
                                    if "maxProperties" in self.node else "")

    def doc_values(self):
        own = "at most %d entries" % self.node["maxProperties"] if "maxProperties" in self.node else ""
        return "; ".join(v for v in (own, self.element.doc_values()) if v)
