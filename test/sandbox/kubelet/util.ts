// Small helpers shared by the kubelet's parts.

export const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms));
