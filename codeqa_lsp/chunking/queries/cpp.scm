; inherits: c
(class_specifier name: (_) @name body: (field_declaration_list)) @definition.class
