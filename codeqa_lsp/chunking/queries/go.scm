(function_declaration name: (identifier) @name body: (_)? @body) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name
  body: (_)? @body) @definition.function
; A type_spec is widened to its `type` declaration when it is the only one in it.
(type_spec name: (type_identifier) @name type: [(struct_type) (interface_type)]) @definition.class
