"""What the model is sent: the system state and its sections, the context engine that appends
only what changed, the provider-neutral messages, the projection to one request, estimates."""
