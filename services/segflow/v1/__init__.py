"""Generated gRPC/protobuf stubs of protos/segflow/v1 (regenerate with `make protos`)."""
