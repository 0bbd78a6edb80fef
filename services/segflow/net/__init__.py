"""The network layer: encoding stream elements as frames, and gRPC channels."""
PROTOCOL_VERSION = 1
