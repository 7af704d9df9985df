# Writes the schema file IN as a C++ raw string into OUT.
file(READ ${IN} content)
file(WRITE ${OUT} "// Generated from shared/api/schema/modelservice.schema.json. Do not edit.\n#include <string_view>\nnamespace ms {\nextern const std::string_view kModelServiceSchemaJson;\nconst std::string_view kModelServiceSchemaJson = R\"MSSCHEMA(${content})MSSCHEMA\";\n}  // namespace ms\n")
