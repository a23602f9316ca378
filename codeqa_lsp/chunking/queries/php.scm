(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.function
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.class
(trait_declaration name: (name) @name) @definition.class
(enum_declaration name: (name) @name) @definition.class
