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
