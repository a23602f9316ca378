; Python: functions (methods when inside a class) and classes. Decorators are picked up by
; wrapper expansion (decorated_definition), docstrings from the body.
(function_definition name: (identifier) @name body: (_) @body) @definition.function
(class_definition name: (identifier) @name body: (_) @body) @definition.class
