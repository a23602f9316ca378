(function_definition declarator: (_) @declarator) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.class
