module railfit/tools/upstream-allocator

go 1.19
