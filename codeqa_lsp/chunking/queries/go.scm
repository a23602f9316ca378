(function_declaration name: (identifier) @name body: (_)? @body) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name
  body: (_)? @body) @definition.function
; A type_spec is widened to its `type` declaration when it is the only one in it. Every named
; type is a definition (`type HandlerFunc func(...)`, `type Level int`), and so is an alias.
(type_spec name: (type_identifier) @name) @definition.class
(type_alias name: (type_identifier) @name) @definition.class
