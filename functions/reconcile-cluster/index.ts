// Entry point of the reconcile-cluster function (FUNCTION_TARGET=reconcile-cluster).
import * as ff from '@google-cloud/functions-framework';
import { eventFunction } from '../../shared/events/handler.ts';
import { handler } from './handler.ts';

export const FUNCTION_NAME = 'reconcile-cluster';
ff.http(FUNCTION_NAME, eventFunction(FUNCTION_NAME, handler));
