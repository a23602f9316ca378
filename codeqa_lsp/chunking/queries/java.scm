(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.class
(method_declaration name: (identifier) @name body: (block)) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(compact_constructor_declaration name: (identifier) @name) @definition.function
