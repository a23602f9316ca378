; inherits: javascript
; TypeScript and TSX: the JavaScript patterns plus these.
(abstract_class_declaration name: (_) @name body: (_) @body) @definition.class
(interface_declaration name: (_) @name body: (_) @body) @definition.class
(enum_declaration name: (_) @name body: (_) @body) @definition.class
(type_alias_declaration name: (_) @name) @definition.class
(internal_module name: (_) @name) @definition.namespace
(function_signature name: (identifier) @name) @definition.function
; Overload signatures in a class body merge with their implementation (same symbol).
(class_body (method_signature name: (_) @name) @definition.function)
; Class fields holding functions: `produce = (x) => {}` → `Class.produce`.
(public_field_definition
  name: (_) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @definition.function
