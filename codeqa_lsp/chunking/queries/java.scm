(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.class
(method_declaration name: (identifier) @name body: (block)) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(compact_constructor_declaration name: (identifier) @name) @definition.function
; An enum constant with a body (`IDENTITY() { ... }`) is a container, so its methods are
; named `Policy.IDENTITY.translateName`, not five chunks all called `Policy.translateName`.
(enum_constant name: (identifier) @name body: (class_body)) @definition.class
; A field holding an anonymous class (`static final Filter BLOCK_ALL = new Filter() { ... }`,
; maybe with a call on it: `... }.nullSafe()`) names its methods after the field:
; `Filter.BLOCK_ALL.check`, one name per instance. Interface fields are constant_declarations.
(field_declaration
  declarator: (variable_declarator
    name: (identifier) @name
    value: [
      (object_creation_expression (class_body))
      (method_invocation object: (object_creation_expression (class_body)))
    ])) @definition.class
(constant_declaration
  declarator: (variable_declarator
    name: (identifier) @name
    value: [
      (object_creation_expression (class_body))
      (method_invocation object: (object_creation_expression (class_body)))
    ])) @definition.class
