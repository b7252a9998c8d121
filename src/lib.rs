// binding
