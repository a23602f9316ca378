(function_definition declarator: (_) @declarator) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.class
; `typedef struct { ... } Point;`: an anonymous struct, union or enum is named by its typedef.
(type_definition
  type: [
    (struct_specifier !name body: (field_declaration_list))
    (union_specifier !name body: (field_declaration_list))
    (enum_specifier !name body: (enumerator_list))
  ]
  declarator: (type_identifier) @name) @definition.class
; `#define MAX(a, b) ...`: a function-like macro is code a reader looks up by name; an
; object-like `#define` stays in its module chunk with the other top-level lines.
(preproc_function_def name: (identifier) @name) @definition.function
