(function_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.class
(union_item name: (type_identifier) @name) @definition.class
(trait_item name: (type_identifier) @name) @definition.class
(type_item name: (type_identifier) @name) @definition.class
(impl_item type: (_) @name) @definition.impl
(mod_item name: (identifier) @name body: (declaration_list)) @definition.namespace
(macro_definition name: (identifier) @name) @definition.function
