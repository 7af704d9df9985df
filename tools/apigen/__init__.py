"""The ModelService API generator (tools/gen-api.py).

One definition, shared/api/schema/modelservice.schema.json (the CRD's
openAPIV3Schema plus `x-ms-*` annotations), gives:

  model.py   the definition read into structs, fields and their kinds
  kinds.py   one class per kind of field (integer, string, enum, ...): its C++
             type, rule, parser call and how the reference docs show it
  cpp.py     the typed spec, its rules and parsers (shared/api/*.gen.*)
  docs.py    the API reference (docs/user/api-reference.md)
  crd.py     the CustomResourceDefinition (manifests/crd/)

Standard library only, deterministic output (CI compares it with what is
committed).
"""
